/**
 * Bodies that nest deep or name long fields, over a real server: legacy filters get the typed
 * filter's depth and size limits before the recursive parse (1,000 deep overflowed it: a 500),
 * no JSON route answers 5xx to a body nested 10,000 deep, and filter field names have a length limit.
 */
import { describe, expect, it } from "vitest";
import { endpoints, fillPath } from "../../src/api/endpoints.js";
import {
  FILTER_FIELD_MAX_LENGTH,
  FILTER_LEAVES_MAX,
  FILTER_MAX_DEPTH,
  JSON_VALUE_MAX_DEPTH,
} from "../../src/api/limits.js";
import { serverPerFile } from "../support/harness.js";

const { server } = serverPerFile({ workers: 1 });

/** Written out as text: JSON.stringify itself overflows the stack some thousands of levels down. */
const legacyNested = (depth: number, leaf = '{"key":"team","value":"blue"}') =>
  `${'{"AND":['.repeat(depth)}${leaf}${"]}".repeat(depth)}`;
const typedNested = (depth: number, leaf = '{"field":"team","operator":"eq","value":"blue"}') =>
  `${'{"operator":"and","operands":['.repeat(depth)}${leaf}${"]}".repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}"x"${"}".repeat(depth)}`;
const deepArray = (depth: number) => `${"[".repeat(depth)}"x"${"]".repeat(depth)}`;

/** The legacy routes that take `filters`, each with the rest of a valid body. */
const LEGACY_FILTER_ROUTES: [string, string][] = [
  ["/v3/documents/list", "{}"],
  ["/v4/memories/list", '{"containerTags":["deep"]}'],
  ["/v4/search", '{"q":"release"}'],
  ["/v4/profile", '{"containerTag":"deep"}'],
];
const withFilters = (rest: string, filters: string) =>
  rest === "{}" ? `{"filters":${filters}}` : `${rest.slice(0, -1)},"filters":${filters}}`;

async function answer(path: string, body: string, method = "POST") {
  const res = await server.call(method, path, { body });
  const text = await res.text();
  return { status: res.status, details: (JSON.parse(text) as { details?: string }).details ?? text };
}

describe("legacy filters: the typed filter's limits, checked before the recursive parse", () => {
  for (const [path, rest] of LEGACY_FILTER_ROUTES) {
    it(`${path}: groups nested 800, 1,000 and 100,000 deep answer 400 naming the depth rule`, async () => {
      for (const depth of [800, 1000, 100_000]) {
        const r = await answer(path, withFilters(rest, legacyNested(depth)));
        expect(r.status, `${depth}: ${r.details}`).toBe(400);
        expect(r.details).toContain(`filters: filter groups nest at most ${FILTER_MAX_DEPTH} levels`);
      }
    });
  }

  it("a group with both AND and OR lists is walked through both", async () => {
    const both = `{"AND":[{"key":"a","value":"x"}],"OR":[${legacyNested(5000)}]}`;
    const r = await answer("/v4/search", `{"q":"release","filters":${both}}`);
    expect(r.status, r.details).toBe(400);
  });

  it("answers 400 naming the leaf rule for a legacy filter with too many leaves", async () => {
    const leaf = '{"key":"team","value":"blue"}';
    const group = `{"OR":[${Array(200).fill(leaf).join(",")}]}`;
    const groups = Math.ceil((FILTER_LEAVES_MAX + 1) / 200);
    const r = await answer(
      "/v4/search",
      `{"q":"release","filters":{"AND":[${Array(groups).fill(group).join(",")}]}}`,
    );
    expect(r.status).toBe(400);
    expect(r.details).toContain(`at most ${FILTER_LEAVES_MAX} leaves`);
  });

  it(`still takes a legacy filter ${FILTER_MAX_DEPTH} levels deep`, async () => {
    const r = await answer("/v4/search", `{"q":"release","filters":${legacyNested(FILTER_MAX_DEPTH)}}`);
    expect(r.status, r.details).toBe(200);
  });
});

describe("filter field names have a length limit", () => {
  const long = "k".repeat(100_000);
  const atLimit = "k".repeat(FILTER_FIELD_MAX_LENGTH);
  const over = "k".repeat(FILTER_FIELD_MAX_LENGTH + 1);

  it("v5: a field of 100,000 characters (and one over the limit) answers 400 naming the field and rule", async () => {
    for (const field of [long, over]) {
      const filter = `{"operator":"and","operands":[{"field":"${field}","operator":"eq","value":"x"}]}`;
      for (const path of ["/ns/deep/search", "/ns/deep/list/memories", "/ns/deep/profile"]) {
        const body = path.endsWith("search")
          ? `{"query":"release","filter":${filter}}`
          : `{"filter":${filter}}`;
        const r = await answer(path, body);
        expect(r.status, `${path}: ${r.details.slice(0, 200)}`).toBe(400);
        expect(r.details).toContain(
          `filter.operands.0.field: field must be at most ${FILTER_FIELD_MAX_LENGTH} characters`,
        );
      }
    }
  });

  it("legacy: a key of 100,000 characters answers 400 naming the key and rule", async () => {
    for (const [path, rest] of LEGACY_FILTER_ROUTES) {
      const r = await answer(path, withFilters(rest, `{"AND":[{"key":"${long}","value":"x"}]}`));
      expect(r.status, `${path}: ${r.details.slice(0, 200)}`).toBe(400);
      expect(r.details).toContain(
        `filters.AND.0.key: key must be at most ${FILTER_FIELD_MAX_LENGTH} characters`,
      );
    }
  });

  it(`takes a field of ${FILTER_FIELD_MAX_LENGTH} characters`, async () => {
    const typed = `{"field":"${atLimit}","operator":"eq","value":"x"}`;
    expect((await answer("/ns/deep/search", `{"query":"release","filter":${typed}}`)).status).toBe(200);
    const legacy = `{"AND":[{"key":"${atLimit}","value":"x"}]}`;
    expect((await answer("/v4/search", `{"q":"release","filters":${legacy}}`)).status).toBe(200);
  });
});

describe("no JSON body nested 10,000 deep answers 5xx", () => {
  const DEPTH = 10_000;
  const nested: Record<string, string> = {
    object: deepObject(DEPTH),
    array: deepArray(DEPTH),
    typed: typedNested(DEPTH),
    legacy: legacyNested(DEPTH),
  };

  it("in any field of any JSON route of the contract", async () => {
    const failures: string[] = [];
    let asked = 0;
    for (const [name, e] of Object.entries(endpoints)) {
      if (!e.body || ("bodyType" in e && e.bodyType === "multipart")) continue;
      const path = fillPath(e.path, { namespace: "deep", id: "none", type: "memories" });
      // Every top-level field the body schema names, and one it does not.
      const shape = (e.body as unknown as { shape?: Record<string, unknown> }).shape;
      const fields = [...Object.keys(shape ?? {}), "extra"];
      for (const field of fields) {
        for (const [kind, value] of Object.entries(nested)) {
          asked++;
          const r = await answer(path, `{"${field}":${value}}`, e.method);
          if (r.status >= 500)
            failures.push(`${name} ${field} ${kind}: ${r.status} ${r.details.slice(0, 120)}`);
        }
      }
    }
    expect(asked).toBeGreaterThan(100);
    expect(failures).toEqual([]);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it("a connector's config and selection nested too deep answer 400 naming the field and rule", async () => {
    const rule = `nests at most ${JSON_VALUE_MAX_DEPTH} levels of objects and arrays`;
    for (const value of [deepObject(DEPTH), deepArray(DEPTH), deepObject(JSON_VALUE_MAX_DEPTH + 1)]) {
      const r = await answer(
        "/ns/deep/connectors",
        `{"provider":"web-crawler","config":{"startUrl":"http://127.0.0.1:9/","x":${value}}}`,
      );
      expect(r.status, r.details.slice(0, 200)).toBe(400);
      expect(r.details).toContain(`config: ${rule}`);
    }
    const created = await answer(
      "/ns/deep/connectors",
      `{"provider":"web-crawler","config":{"startUrl":"http://127.0.0.1:9/","x":${deepObject(JSON_VALUE_MAX_DEPTH - 1)}},"syncIntervalSeconds":0}`,
    );
    expect(created.status, created.details).toBe(200);
    const { id } = JSON.parse(JSON.stringify(await (await server.call("GET", "/ns/deep/connectors")).json()))
      .connectors[0] as { id: string };
    const patched = await answer(
      `/ns/deep/connectors/${id}`,
      `{"selection":{"x":${deepObject(DEPTH)}}}`,
      "PATCH",
    );
    expect(patched.status, patched.details.slice(0, 200)).toBe(400);
    expect(patched.details).toContain(`selection: ${rule}`);
    // Refused, so nothing changed: the stored connector has no selection.
    const after = (await (await server.call("GET", `/ns/deep/connectors/${id}`)).json()) as {
      selection?: unknown;
    };
    expect(after.selection ?? null).toBeNull();
  });
});
