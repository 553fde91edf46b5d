import { validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/api/openapi.js";

/** Every `$ref` in the document, with where it sits. */
function refs(o: unknown, at = ""): [string, string][] {
  if (Array.isArray(o)) return o.flatMap((v, i) => refs(v, `${at}/${i}`));
  if (!o || typeof o !== "object") return [];
  return Object.entries(o).flatMap(([k, v]): [string, string][] =>
    k === "$ref" && typeof v === "string" ? [[at, v]] : refs(v, `${at}/${k}`),
  );
}

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 for @readme/openapi-parser", async () => {
    // A JSON copy, as a client would fetch it: the validator takes a plain document.
    const result = await validate(JSON.parse(JSON.stringify(openApiDocument("http://127.0.0.1:8787"))));
    expect(result.valid, JSON.stringify(result)).toBe(true);
  });

  it("points every $ref at a schema of components/schemas that exists", () => {
    const doc = openApiDocument();
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(100);
    for (const [at, ref] of all) {
      expect(ref, at).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas, `${at} -> ${ref}`).toHaveProperty([ref.split("/").pop()!]);
    }
  });

  it("describes the uploads as multipart/form-data with a binary file part", () => {
    const doc = openApiDocument() as unknown as {
      paths: Record<
        string,
        { post: { requestBody: { content: Record<string, { schema: { properties: object } }> } } }
      >;
    };
    for (const path of ["/ns/{namespace}/document/file", "/v3/documents/file"]) {
      const content = doc.paths[path]!.post.requestBody.content;
      expect(Object.keys(content), path).toEqual(["multipart/form-data"]);
      expect(content["multipart/form-data"]!.schema.properties, path).toHaveProperty(
        "file",
        expect.objectContaining({ format: "binary", maxLength: 50 * 1024 * 1024 }),
      );
    }
  });

  it("keeps the recursive filter as one shared schema per direction, not a copy per operation", () => {
    const names = Object.keys(openApiDocument().components.schemas);
    expect(names.length).toBeLessThanOrEqual(6);
  });

  it("describes every legacy v3 and v4 route, /v4/memories answering 201", () => {
    const doc = openApiDocument();
    const legacy = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith("/v3/") || path.startsWith("/v4/"))
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(legacy).toEqual(
      [
        "POST /v3/documents",
        "POST /v3/documents/batch",
        "POST /v3/documents/file",
        "GET /v3/documents/{id}",
        "DELETE /v3/documents/{id}",
        "GET /v3/documents/{id}/chunks",
        "POST /v3/documents/list",
        "DELETE /v3/documents/bulk",
        "POST /v4/conversations",
        "POST /v4/memories",
        "PATCH /v4/memories",
        "DELETE /v4/memories",
        "POST /v4/memories/forget-matching",
        "POST /v4/memories/list",
        "POST /v4/search",
        "POST /v4/profile",
        "POST /v4/profile/buckets",
      ].sort(),
    );
    const add = (doc.paths["/v4/memories"] as Record<string, { responses: Record<string, unknown> }>).post!;
    expect(Object.keys(add.responses)).toContain("201");
  });
});
