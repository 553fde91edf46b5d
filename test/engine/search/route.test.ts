import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryClient } from "../../../src/client/index.js";
import { type Engine, openEngine } from "../../../src/engine/index.js";
import { TEST_KEY, tempDir } from "../../support/harness.js";

let dir: ReturnType<typeof tempDir>;
let engine: Engine;

const call = (path: string, body: unknown) =>
  engine.fetch(
    new Request(`http://memctx.local${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );

beforeAll(async () => {
  dir = tempDir("memctx-search-route-");
  engine = await openEngine({
    dataDir: dir.path,
    apiKey: TEST_KEY,
    workers: 1,
    embedder: null,
    log: () => {},
  });
  const ns = new MemoryClient({ apiKey: TEST_KEY, fetch: engine.fetch, maxRetries: 0 }).ns("alice");
  // One after another: the first two score alike for "adoption agencies" and rank by the order
  // they were stored in, which adds sent at once on PostgreSQL's pool do not keep.
  const docs: { id: string }[] = [];
  for (const [i, content] of [
    "Caroline is researching adoption agencies so she can build a family.",
    "Caroline went to an adoption meeting at the agency on Friday.",
    "Melanie painted a sunrise over the lake last summer.",
    // superrag: chunks only, so memories mode finds nothing whenever the test runs.
  ].entries())
    docs.push(await ns.documents.add({ content, metadata: { n: i }, taskType: "superrag" }));
  for (const d of docs) await ns.documents.waitFor(d.id, { until: "indexed" });
});
afterAll(async () => {
  await engine?.close();
  dir?.remove();
});

describe("POST /ns/{namespace}/search", () => {
  it("answers the contract's response with chunk hits of indexed documents", async () => {
    const res = await call("/ns/alice/search", { query: "adoption agencies", searchMode: "chunks" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      results: { chunk?: string; similarity: number }[];
      searchTime: number;
    };
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results[0]!.chunk).toContain("adoption agencies");
    expect(body.searchTime).toBeGreaterThanOrEqual(0);
  });

  it("works through the client's search call", async () => {
    const ns = new MemoryClient({ apiKey: TEST_KEY, fetch: engine.fetch, maxRetries: 0 }).ns("alice");
    const res = await ns.search({
      query: "sunrise painting lake",
      filter: { field: "n", operator: "eq", value: 2 },
    });
    expect(res.results.map((r) => r.chunk)).toEqual(["Melanie painted a sunrise over the lake last summer."]);
  });

  it("takes searchMode and limit from the query string, the body winning", async () => {
    const one = await call("/ns/alice/search?searchMode=chunks&limit=1", {
      query: "Caroline adoption",
      threshold: 0,
    });
    expect(((await one.json()) as { results: unknown[] }).results).toHaveLength(1);
    const two = await call("/ns/alice/search?limit=1", {
      query: "Caroline adoption",
      threshold: 0,
      limit: 2,
    });
    expect(((await two.json()) as { results: unknown[] }).results).toHaveLength(2);
    const memories = await call("/ns/alice/search?searchMode=memories", { query: "Caroline adoption" });
    expect(((await memories.json()) as { results: unknown[] }).results).toEqual([]);
    const bodyWins = await call("/ns/alice/search?searchMode=memories", {
      query: "Caroline adoption",
      searchMode: "chunks",
    });
    expect(((await bodyWins.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
  });

  it("refuses a bad request with a 400 naming the field and the rule", async () => {
    const cases: [unknown, RegExp][] = [
      [{ query: "" }, /query/],
      [{ query: "x", threshold: 2 }, /threshold/],
      [{ query: "x", limit: 1000 }, /limit/],
      [{ query: "x", filter: { field: "a b", operator: "eq", value: 1 } }, /field/],
      [{ query: "x", rerank: "best" }, /rerank/],
      [{ query: "x", surprise: true }, /surprise|unrecognized/i],
    ];
    for (const [body, field] of cases) {
      const res = await call("/ns/alice/search", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const err = (await res.json()) as { error: string; details?: string };
      expect(err.details, JSON.stringify(body)).toMatch(field);
    }
    const badQuery = await call("/ns/alice/search?limit=zero", { query: "x" });
    expect(badQuery.status).toBe(400);
  });

  it("finds nothing in another or an unknown namespace", async () => {
    const res = await call("/ns/bob/search", { query: "adoption agencies", threshold: 0 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: unknown[] }).results).toEqual([]);
  });
});
