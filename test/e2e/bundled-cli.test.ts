/**
 * The bundled command (dist/cli/main.js and its chunks, made by scripts/bundle-cli.mjs) is the same
 * server as the sources: its tools/list, converted once by the build, is the reviewed snapshot, and
 * its first search on a store (search's tables loaded after initialize) answers hit for hit what
 * the sources' engine answers to the same question.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { openEngine } from "../../src/engine/index.js";
import { addStores, FIRST_RECALL_STORES } from "../fixtures/first-recall.js";
import { API_KEY, connect } from "../mcp/helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const NODE = join(ROOT, "node_modules/.bin/node");
const MAIN = join(ROOT, "dist/cli/main.js");
const SNAPSHOT = join(ROOT, "test/mcp/__snapshots__/tools.json");
/** Three stores, and one whose question names a date ("in summer": the date parser loads for it). */
const STORES = [
  ...FIRST_RECALL_STORES.slice(0, 3),
  FIRST_RECALL_STORES.find((s) => /summer/.test(s.asks.flat().join()))!,
];

/** `memctx mcp` from the build, as an MCP client starts it. */
async function startBuilt(dataDir: string, args: string[] = []) {
  const transport = new StdioClientTransport({
    command: NODE,
    args: [MAIN, "mcp", ...args],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dataDir,
      MEMCTX_DATA_DIR: dataDir,
      MEMCTX_API_KEY: API_KEY,
      // The suite on PostgreSQL (test/postgres-setup.ts): the child opens the same store.
      ...(process.env.MEMCTX_DATABASE_URL ? { MEMCTX_DATABASE_URL: process.env.MEMCTX_DATABASE_URL } : {}),
    },
    stderr: "ignore",
  });
  const client = new Client({ name: "bundled-e2e", version: "1" });
  await client.connect(transport);
  return client;
}

/** What a search result says: ids, texts, scores, order, its text rendering; all but how long it took. */
const answer = (r: CallToolResult) => {
  if (r.isError) throw new Error(JSON.stringify(r.content));
  const { searchTimeMs: _, ...structured } = r.structuredContent as { searchTimeMs: number };
  return { structured, content: r.content };
};

describe("the bundled memctx command", () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "memctx-bundled-"));
    const engine = await openEngine({ dataDir: dir, apiKey: API_KEY, workers: 1, log: () => {} });
    try {
      await addStores(new MemoryClient({ apiKey: API_KEY, fetch: engine.fetch }), "first", STORES);
    } finally {
      await engine.close();
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("lists the tools of the reviewed snapshot, and only the read-only ones with --read-only", async () => {
    const reviewed = JSON.parse(readFileSync(SNAPSHOT, "utf8"));
    const full = await startBuilt(dir);
    try {
      expect((await full.listTools()).tools).toEqual(reviewed);
    } finally {
      await full.close();
    }
    const readOnly = await startBuilt(dir, ["--read-only"]);
    try {
      const names = reviewed
        .filter((t: { annotations: { readOnlyHint?: boolean } }) => t.annotations.readOnlyHint)
        .map((t: { name: string }) => t.name);
      expect(names.length).toBeGreaterThan(0);
      expect((await readOnly.listTools()).tools).toEqual(
        reviewed.filter((t: { name: string }) => names.includes(t.name)),
      );
    } finally {
      await readOnly.close();
    }
  });

  it("answers a fresh process's first search as the sources' engine answers it", async () => {
    const asked: [string, string][] = STORES.map((s, i) => [
      `first-${i}`,
      (s.asks.find(([q]) => /summer/.test(q)) ?? s.asks[0]!)[0],
    ]);
    expect(asked.map(([, q]) => q).filter((q) => /summer/.test(q))).toHaveLength(1);
    const built: unknown[] = [];
    for (const [namespace, query] of asked) {
      const c = await startBuilt(dir, ["--namespace", namespace]);
      try {
        built.push(answer((await c.callTool({ name: "search", arguments: { query } })) as CallToolResult));
      } finally {
        await c.close();
      }
    }
    const engine = await openEngine({ dataDir: dir, apiKey: API_KEY, workers: 0, log: () => {} });
    try {
      const client = new MemoryClient({ apiKey: API_KEY, fetch: engine.fetch });
      const fromSources: unknown[] = [];
      for (const [namespace, query] of asked) {
        const s = await connect({ client, namespace });
        try {
          fromSources.push(
            answer((await s.mcp.callTool({ name: "search", arguments: { query } })) as CallToolResult),
          );
        } finally {
          await s.close();
        }
      }
      expect(
        fromSources.every((a) => (a as { structured: { results: unknown[] } }).structured.results.length > 0),
      ).toBe(true);
      expect(built).toEqual(fromSources);
    } finally {
      await engine.close();
    }
  });
});
