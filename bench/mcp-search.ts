/**
 * What the MCP layer adds to a search: p50 / p95 of one `search` round trip at 10k documents,
 *   A. through the MemoryClient in-process (engine.fetch): the baseline,
 *   B. through the MCP server in-process (SDK client over InMemoryTransport): A + the MCP layer,
 *   C. through a real `memctx mcp` child process over stdio: B + pipes + another process.
 * The corpus goes in through the public API (batch add) and the pipeline, like real content.
 *
 *   npm run build && npx tsx bench/mcp-search.ts [--docs 10000] [--queries 300] [--mode auto|memories|chunks]
 *     [--data-dir DIR]   seed DIR once and reuse it on later runs
 *
 * --mode auto searches memories when the engine extracted any, else chunks; the output says which.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { MemoryClient } from "../src/client/index.js";
import { openEngine } from "../src/engine/index.js";
import { installDreaming } from "../src/engine/memory/dreamer.js";
import { createMcpServer } from "../src/mcp/server.js";

const args = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const DOCS = Number(opt("docs", "10000"));
const QUERIES = Number(opt("queries", "300"));
const WARMUP = 30;
const MODE = opt("mode", "auto");
const NAMESPACE = "bench";
/** Reuse (or keep) a seeded data directory between runs: seeding 10k documents takes a minute. */
const DATA_DIR = opt("data-dir", "");
const KEY = "mk_bench_mcp_search_0123456789";
const ROOT = resolve(import.meta.dirname, "..");
const MAIN = join(ROOT, "dist/cli/main.js");
const NODE = join(ROOT, "node_modules/.bin/node");

// ---------- a deterministic corpus of short facts ----------
function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(7);
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
const NAMES =
  "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert Sybil Trent Victor Walter Yara".split(
    " ",
  );
const VERBS = [
  "likes",
  "moved to",
  "works on",
  "visited",
  "is learning",
  "bought",
  "recommended",
  "dislikes",
];
const OBJECTS =
  "Berlin pottery Kubernetes sourdough Lisbon the violin climbing Rust Tokyo gardening chess Postgres Kyoto jazz sailing Python Oslo painting".split(
    " ",
  );
const facts = Array.from(
  { length: DOCS },
  (_, i) =>
    `${pick(NAMES)} ${pick(VERBS)} ${pick(OBJECTS)} (note ${i}, ${pick(OBJECTS)} and ${pick(OBJECTS)} came up too).`,
);
const queries = Array.from(
  { length: QUERIES + WARMUP },
  () => `What does ${pick(NAMES)} think about ${pick(OBJECTS)}?`,
);

// ---------- helpers ----------
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
async function mcpSearch(c: Client, query: string, mode: string) {
  const r = (await c.callTool({ name: "search", arguments: { query, mode, limit: 10 } })) as CallToolResult;
  if (r.isError) throw new Error(JSON.stringify(r.content));
  return r;
}

async function main() {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  const dir = DATA_DIR || mkdtempSync(join(tmpdir(), "memctx-bench-mcp-"));
  const seeded = DATA_DIR !== "" && existsSync(join(DATA_DIR, "memctx.db"));
  try {
    // ---------- seed through the API ----------
    // Memory extraction on (offline extractor), so the corpus has memories as well as chunks.
    let engine = await openEngine({
      dataDir: dir,
      apiKey: KEY,
      log: () => {},
      dreamer: (ctx) => installDreaming(ctx, { debounceMs: 100, maxWaitMs: 1000, maxBatch: 200 }),
    });
    let client = new MemoryClient({ apiKey: KEY, fetch: engine.fetch });
    const t0 = performance.now();
    for (let i = 0; !seeded && i < facts.length; i += 500) {
      const res = await client.batch.add({ documents: facts.slice(i, i + 500), containerTag: NAMESPACE });
      if (res.failed)
        throw new Error(`batch add failed: ${JSON.stringify(res.results.find((r) => r.error))}`);
    }
    const ns = client.ns(NAMESPACE);
    const count = async (type: "chunks" | "memories") =>
      ((await ns[type].list({ limit: 1 })).pagination.totalItems ?? 0) as number;
    // Indexed: one chunk per short document. Then memories, until their count stops growing.
    while ((await count("chunks")) < DOCS) await new Promise((r) => setTimeout(r, 500));
    for (let last = -1, same = 0; same < 3; ) {
      const now = await count("memories");
      same = now === last ? same + 1 : 0;
      last = now;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const memoryCount = (await ns.memories.list({ limit: 1 })).pagination.totalItems ?? 0;
    const chunkCount = (await ns.chunks.list({ limit: 1 })).pagination.totalItems ?? 0;
    console.log(
      `${seeded ? "reused" : "seeded"} ${DOCS} documents in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${chunkCount} chunks, ${memoryCount} memories`,
    );
    await client.close();
    await engine.close();
    const mode = MODE === "auto" ? (memoryCount >= DOCS / 2 ? "memories" : "chunks") : MODE;
    console.log(
      `searching ${mode} (${mode === "memories" ? memoryCount : chunkCount} rows), ${QUERIES} queries after ${WARMUP} warm-up, limit 10`,
    );

    // ---------- A, B and C side by side, on the same queries in turn ----------
    // Each query runs through all three (in rotating order), so caches and machine load fall on
    // all alike; the overhead is the median of the per-query differences.
    engine = await openEngine({ dataDir: dir, apiKey: KEY, workers: 0, log: () => {} });
    client = new MemoryClient({ apiKey: KEY, fetch: engine.fetch });
    const server = createMcpServer({ client, namespace: NAMESPACE });
    const [ct, st] = InMemoryTransport.createLinkedPair();
    await server.connect(st);
    const inMemory = new Client({ name: "bench", version: "1" });
    await inMemory.connect(ct);
    const transport = new StdioClientTransport({
      command: NODE,
      args: [MAIN, "mcp", "--namespace", NAMESPACE],
      env: { PATH: process.env.PATH ?? "", HOME: dir, MEMCTX_DATA_DIR: dir, MEMCTX_API_KEY: KEY },
      stderr: "ignore",
    });
    const stdio = new Client({ name: "bench", version: "1" });
    await stdio.connect(transport);

    const paths: ((q: string) => Promise<unknown>)[] = [
      (q) =>
        client
          .ns(NAMESPACE)
          .search({ query: q, searchMode: mode as "chunks", limit: 10, include: { documents: true } }),
      (q) => mcpSearch(inMemory, q, mode),
      (q) => mcpSearch(stdio, q, mode),
    ];
    const times: number[][] = [[], [], []];
    for (const [i, q] of queries.entries()) {
      for (let k = 0; k < 3; k++) {
        const which = (i + k) % 3;
        const t1 = performance.now();
        await paths[which]!(q);
        if (i >= WARMUP) times[which]!.push(performance.now() - t1);
      }
    }
    await stdio.close();
    await inMemory.close();
    await server.close();
    await client.close();
    await engine.close();

    const [a, b, c] = times as [number[], number[], number[]];
    const diff = (xs: number[]) =>
      pct(
        xs.map((x, i) => x - a[i]!),
        50,
      );
    const row = (name: string, xs: number[]) =>
      `${name.padEnd(46)} p50 ${pct(xs, 50).toFixed(2).padStart(7)} ms   p95 ${pct(xs, 95).toFixed(2).padStart(7)} ms`;
    console.log(row("A. MemoryClient in-process (engine.fetch)", a));
    console.log(row("B. MCP search, in-process (InMemoryTransport)", b));
    console.log(row("C. MCP search, stdio child process", c));
    console.log(`MCP layer, median of per-query (B - A): ${diff(b).toFixed(2)} ms`);
    console.log(`MCP over stdio, median of per-query (C - A): ${diff(c).toFixed(2)} ms`);
  } finally {
    if (!DATA_DIR) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
