import { z } from "zod";
import { ErrorResponse } from "./common.js";
import { type Endpoint, endpoints, writes } from "./endpoints.js";

type Json = Record<string, unknown>;

const jsonSchema = (s: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(s, {
    target: "draft-2020-12",
    io,
    unrepresentable: "any",
    cycles: "ref",
    reused: "inline",
  }) as Json;

const COMPONENT = "#/components/schemas/";

/**
 * The document's shared schemas. zod writes a recursive schema (the filter, a memory's relations)
 * with `$defs` and `$ref: "#/$defs/…"` or `"#"`, which inside an OpenAPI document would point at the
 * document's own root: those definitions move to components/schemas and their refs follow them.
 */
class Components {
  readonly schemas: Record<string, Json> = {};
  /** The same definition, written the same way by zod, is kept once. */
  private byText = new Map<string, string>();

  /** A schema fit to sit anywhere in the document; `name` names it if it must become a component. */
  place(js: Json, name: string): Json {
    const defs = (js.$defs ?? {}) as Record<string, Json>;
    delete js.$defs;
    delete js.$schema;
    const renamed: Record<string, string> = {};
    for (const [key, def] of Object.entries(defs)) {
      const text = JSON.stringify([key, def, defs]);
      renamed[key] = this.byText.get(text) ?? `${name}_${key.replace(/^_+/, "")}`;
      this.byText.set(text, renamed[key]);
    }
    const selfRef = JSON.stringify(js).includes('"$ref":"#"');
    const rewrite = (o: unknown): unknown => {
      if (Array.isArray(o)) return o.map(rewrite);
      if (!o || typeof o !== "object") return o;
      const out: Json = {};
      for (const [k, v] of Object.entries(o)) {
        if (k === "$ref" && v === "#") out[k] = `${COMPONENT}${name}`;
        else if (k === "$ref" && typeof v === "string" && v.startsWith("#/$defs/"))
          out[k] = `${COMPONENT}${renamed[v.slice("#/$defs/".length)]}`;
        else out[k] = rewrite(v);
      }
      return out;
    };
    for (const [key, def] of Object.entries(defs)) {
      const target = renamed[key]!;
      if (!(target in this.schemas)) this.schemas[target] = rewrite(def) as Json;
    }
    const placed = rewrite(js) as Json;
    if (!selfRef) return placed;
    this.schemas[name] = placed;
    return { $ref: `${COMPONENT}${name}` };
  }
}

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function parameters(e: Endpoint, operationId: string, components: Components) {
  const out: object[] = [];
  for (const [where, s] of [
    ["path", e.params],
    ["query", e.query],
  ] as const) {
    if (!s) continue;
    const js = components.place(
      jsonSchema(s, "input"),
      `${capitalized(operationId)}${capitalized(where)}`,
    ) as {
      properties?: Record<string, object>;
      required?: string[];
    };
    for (const [name, p] of Object.entries(js.properties ?? {})) {
      out.push({
        name,
        in: where,
        required: where === "path" || (js.required ?? []).includes(name),
        schema: p,
      });
    }
  }
  return out;
}

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } },
});

/** Endpoints whose documents count against an organization's document token quota (402 over it). */
const QUOTA_COUNTED: ReadonlySet<string> = new Set(["addDocument", "batchAdd"]);

/** The OpenAPI 3.1 document of the v5 API, generated from the same schemas the code uses. */
export function openApiDocument(serverUrl?: string) {
  const paths: Record<string, Record<string, object>> = {};
  const components = new Components();
  const errorSchema = components.place(jsonSchema(ErrorResponse, "output"), "ErrorResponse");
  for (const [operationId, e] of Object.entries(endpoints) as [string, Endpoint][]) {
    const name = capitalized(operationId);
    const op: Record<string, unknown> = {
      operationId,
      tags: [e.tag],
      summary: e.summary,
      parameters: parameters(e, operationId, components),
      responses: {
        [String(e.status ?? 200)]: {
          description: "Success",
          content: {
            "application/json": {
              schema: components.place(jsonSchema(e.response, "output"), `${name}Response`),
            },
          },
        },
        "400": errorResponse("Invalid request: details names the field and the rule"),
        "401": errorResponse("Missing or invalid API key"),
        ...(QUOTA_COUNTED.has(operationId)
          ? {
              "402": errorResponse(
                "Document token limit reached: the organization's quota; nothing was added",
              ),
            }
          : {}),
        "403": errorResponse(
          writes(e)
            ? "This API key may not use this namespace, or is read-only (this endpoint writes)"
            : "This API key may not use this namespace",
        ),
        "404": errorResponse("Not found in this namespace"),
        "413": errorResponse("Request body too large"),
        "429": errorResponse("Rate limited; see Retry-After"),
      },
      security: [{ bearer: [] }],
    };
    if (e.body) {
      const mediaType = e.bodyType === "multipart" ? "multipart/form-data" : "application/json";
      op.requestBody = {
        required: true,
        content: {
          [mediaType]: { schema: components.place(jsonSchema(e.body, "input"), `${name}Request`) },
        },
      };
    }
    paths[e.path] ??= {};
    paths[e.path]![e.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Memory and Context Service API", version: "5.0.0" },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { ErrorResponse: errorSchema, ...components.schemas },
    },
  };
}
