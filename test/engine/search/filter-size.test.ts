import { beforeAll, describe, expect, it } from "vitest";
import {
  FILTER_LEAVES_MAX,
  FILTER_MAX_DEPTH,
  FILTER_OPERANDS_MAX,
  METADATA_KEYS_MAX,
} from "../../../src/api/limits.js";
import { serverPerFile } from "../../support/harness.js";

const { server } = serverPerFile({ workers: 1 });

/** Groups of 200 leaves: legal by the spec (1..200 operands a group, 5 levels) up to FILTER_LEAVES_MAX in all. */
function wideFilter(groups: number, width: number) {
  return {
    operator: "and",
    operands: Array.from({ length: groups }, (_, g) => ({
      operator: "or",
      operands: Array.from({ length: width }, (_, i) =>
        // One operand of each group matches the indexed document; the others name other values.
        i === 0
          ? { field: "team", operator: "eq", value: "blue" }
          : { field: `k${g}`, operator: "eq", value: `v${g}-${i}` },
      ),
    })),
  };
}

function deepFilter(depth: number): unknown {
  let f: unknown = { field: "team", operator: "eq", value: "blue" };
  for (let i = 0; i < depth; i++) f = { operator: "and", operands: [f] };
  return f;
}

/** As many groups of FILTER_OPERANDS_MAX leaves as FILTER_LEAVES_MAX allows. */
const GROUPS = FILTER_LEAVES_MAX / FILTER_OPERANDS_MAX;

/** Metadata as wide as a document may carry: every filter leaf reads it, row by row. */
const wideMetadata = () => {
  const m: Record<string, string> = { team: "blue" };
  for (let i = 1; i < METADATA_KEYS_MAX; i++) m[`k${i}`] = `value ${i}`;
  return m;
};

beforeAll(async () => {
  const ns = server.client().ns("wide");
  const doc = await ns.documents.add({
    content: "The blue team ships the release on Friday.",
    metadata: wideMetadata(),
  });
  await ns.documents.waitFor(doc.id, { until: "indexed" });
});

// On PostgreSQL a statement with FILTER_LEAVES_MAX leaves is planned each time it runs: the suite's
// one test timeout (vitest.config.ts) leaves room for a busy machine.
describe("filter size", () => {
  it("searches with FILTER_LEAVES_MAX leaves over the widest metadata without hitting SQLite's limits", async () => {
    for (const searchMode of ["chunks", "memories", "hybrid"]) {
      const res = await server.call("POST", "/ns/wide/search", {
        body: {
          query: "release Friday",
          searchMode,
          threshold: 0,
          filter: wideFilter(GROUPS, FILTER_OPERANDS_MAX),
        },
      });
      expect(res.status, `${searchMode}: ${await res.clone().text()}`).toBe(200);
      if (searchMode === "chunks") {
        const body = (await res.json()) as { results: { chunk?: string }[] };
        expect(body.results[0]?.chunk).toContain("blue team");
      }
    }
  });

  it("lists documents, chunks and memories with the same wide filter", async () => {
    for (const type of ["documents", "chunks", "memories"]) {
      const res = await server.call("POST", `/ns/wide/list/${type}`, {
        body: { filter: wideFilter(GROUPS, FILTER_OPERANDS_MAX) },
      });
      expect(res.status, `${type}: ${await res.clone().text()}`).toBe(200);
    }
  });

  it("excludes what the wide filter excludes", async () => {
    const filter = wideFilter(GROUPS, FILTER_OPERANDS_MAX);
    // The last group no longer names the document's team: nothing matches.
    filter.operands[GROUPS - 1]!.operands[0] = { field: "team", operator: "eq", value: "red" };
    const res = await server.call("POST", "/ns/wide/search", {
      body: { query: "release Friday", searchMode: "chunks", threshold: 0, filter },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: unknown[] }).results).toEqual([]);
  });

  it("takes FILTER_LEAVES_MAX leaves on documentId, a field of two columns for memories", async () => {
    const filter = {
      operator: "or",
      operands: Array.from({ length: FILTER_LEAVES_MAX / 200 }, (_, g) => ({
        operator: "or",
        operands: Array.from({ length: 200 }, (_, i) => ({
          field: "documentId",
          operator: "contains",
          value: g === 0 && i === 0 ? "doc_" : `other-${g}-${i}`,
        })),
      })),
    };
    for (const searchMode of ["chunks", "memories"]) {
      const res = await server.call("POST", "/ns/wide/search", {
        body: { query: "release Friday", searchMode, threshold: 0, filter },
      });
      expect(res.status, `${searchMode}: ${await res.clone().text()}`).toBe(200);
      if (searchMode === "chunks") {
        expect(((await res.json()) as { results: unknown[] }).results).toHaveLength(1);
      }
    }
  });

  it("answers 400 naming the depth limit for groups nested 1,000 deep", async () => {
    const res = await server.call("POST", "/ns/wide/search", {
      body: { query: "release", filter: deepFilter(1000) },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; details: string };
    expect(body.details).toContain(`at most ${FILTER_MAX_DEPTH} levels`);
    expect(body.details).toContain("filter");
  });

  it("answers 400, not a stack overflow, for groups nested 100,000 deep", async () => {
    // Written out by hand: JSON.stringify itself would overflow the stack on this.
    const depth = 100_000;
    const filter = `${'{"operator":"and","operands":['.repeat(depth)}{"field":"team","operator":"eq","value":"blue"}${"]}".repeat(depth)}`;
    const res = await server.call("POST", "/ns/wide/search", {
      body: `{"query":"release","filter":${filter}}`,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { details: string }).details).toContain(
      `at most ${FILTER_MAX_DEPTH} levels`,
    );
  });

  it("answers 400 naming the leaf limit for a filter with too many leaves", async () => {
    // 5 levels of 200 operands would be 200^5 leaves; this one holds one more than allowed.
    const width = 200;
    const groups = Math.ceil((FILTER_LEAVES_MAX + 1) / width);
    const res = await server.call("POST", "/ns/wide/search", {
      body: { query: "release", filter: wideFilter(groups, width) },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { details: string };
    expect(body.details).toContain(`at most ${FILTER_LEAVES_MAX} leaves`);
  });
});
