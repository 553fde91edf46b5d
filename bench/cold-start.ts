/**
 * Cold start and idle memory beside the reference memory server, in one run on one machine: spawn
 * to the first search result (initialize, tools/list, one search) on a store that holds something
 * (by default 1k and 10k memories; 0 is an empty store), and the resident memory after it. Both
 * servers get the same data: memctx's store seeded as bench/suite/speed.ts seeds it (LoCoMo-like
 * turns, one memory each), server-memory as many observations in its JSONL file, loaded through
 * its own tools. The runs alternate memctx / server-memory so that machine noise falls on both;
 * each server is started once unmeasured per size first (Node's compile cache, SQLite's first
 * open), as a client that started it before sees it. Beside the wall time, each server's own CPU
 * time to its first answer (/proc): on a shared machine the wall time moves with the other jobs.
 *
 *   npm run build && npx tsx bench/cold-start.ts [runs=9] [sizes=1000,10000]
 *
 * BENCH_MEMCTX_MAINS=a/main.js,b/main.js compares several builds (each beside node_modules).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEngine } from "../src/engine/index.js";
import { API_KEY, cpuMs, type McpChild, NODE, ROOT, rssMiB, startMcp } from "./suite/common.js";
import { Corpus, seedDocuments, TURNS_PER_DOCUMENT } from "./suite/corpus.js";
import { seedServerMemory, serverMemoryEntry, startServerMemory } from "./suite/server-memory.js";

const runs = Number(process.argv[2] ?? 9);
const sizes = (process.argv[3] ?? "1000,10000").split(",").map(Number);
const NAMESPACE = "bench";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(start: () => Promise<McpChild>, first: (c: McpChild) => Promise<unknown>) {
  const t0 = performance.now();
  const child = await start();
  await child.client.listTools();
  await first(child);
  const ms = performance.now() - t0;
  // The server's own CPU to that answer: what the machine's other jobs do not change.
  const cpu = cpuMs(child.pid);
  // Idle: a moment after the first answer, as a client holding the server between turns sees it;
  // and 3 s later (memctx starts its processing threads only once there is work: none here).
  await new Promise((r) => setTimeout(r, 500));
  const rss = rssMiB(child.pid);
  await new Promise((r) => setTimeout(r, 2500));
  const rssLater = rssMiB(child.pid);
  await child.close();
  return { ms, cpu, rss, rssLater };
}

/** memctx's data directory holding `size` memories (and as many chunks), seeded in process. */
async function seedMemctx(dir: string, corpus: Corpus, size: number): Promise<void> {
  const engine = await openEngine({ dataDir: dir, apiKey: API_KEY, workers: 0, log: () => {} });
  try {
    if (size > 0) await seedDocuments(engine, corpus, NAMESPACE, 0, Math.ceil(size / TURNS_PER_DOCUMENT));
    await engine.context.db.exec("PRAGMA optimize");
  } finally {
    await engine.close();
  }
}

type Figures = { ms: number[]; cpu: number[]; rss: number[]; rssLater: number[] };
const reference = await serverMemoryEntry();
const mains = (process.env.BENCH_MEMCTX_MAINS ?? join(ROOT, "dist/cli/main.js")).split(",");
const corpus = new Corpus();
const lines: string[] = [];
for (const size of sizes) {
  const dir = mkdtempSync(join(tmpdir(), "memctx-cold-"));
  try {
    const dataDirs = new Map(mains.map((main, i) => [main, join(dir, `memctx-${i}`)]));
    for (const dataDir of dataDirs.values()) await seedMemctx(dataDir, corpus, size);
    const file = join(dir, "memory.jsonl");
    if ("entry" in reference) await seedServerMemory(reference.entry, file, corpus, size);

    const servers: { name: string; run: () => Promise<Awaited<ReturnType<typeof measure>>> }[] = [];
    for (const main of mains) {
      const dataDir = dataDirs.get(main)!;
      let q = 0;
      servers.push({
        name: mains.length > 1 ? main : "memctx",
        run: () =>
          measure(
            () =>
              startMcp(NODE, [main, "mcp", "--namespace", NAMESPACE], {
                HOME: dir,
                MEMCTX_DATA_DIR: dataDir,
              }),
            (c) => c.call("search", { query: corpus.questions[q++ % corpus.questions.length]! }),
          ),
      });
    }
    if ("entry" in reference) {
      let q = 0;
      servers.push({
        name: "server-memory",
        run: () =>
          measure(
            () => startServerMemory(reference.entry, file),
            (c) => c.call("search_nodes", { query: corpus.questions[q++ % corpus.questions.length]! }),
          ),
      });
    }
    const results = new Map<string, Figures>(
      servers.map((s) => [s.name, { ms: [], cpu: [], rss: [], rssLater: [] }]),
    );
    for (const s of servers) await s.run(); // unmeasured: the compile cache, the store's first open
    for (let i = 0; i < runs; i++) {
      for (const s of servers) {
        const m = await s.run();
        const r = results.get(s.name)!;
        r.ms.push(m.ms);
        r.cpu.push(m.cpu ?? Number.NaN);
        r.rss.push(m.rss ?? Number.NaN);
        r.rssLater.push(m.rssLater ?? Number.NaN);
      }
    }
    const base = results.get("server-memory");
    for (const [name, r] of results) {
      const ratio = (of: (f: Figures) => number[]) =>
        base && name !== "server-memory" ? ` (${(median(of(r)) / median(of(base))).toFixed(2)}x)` : "";
      lines.push(
        `${size} memories, ${name}: first search result median ${median(r.ms).toFixed(0)} ms${ratio((f) => f.ms)} (min ${Math.min(...r.ms).toFixed(0)}, max ${Math.max(...r.ms).toFixed(0)}), server CPU to it median ${median(r.cpu).toFixed(0)} ms${ratio((f) => f.cpu)}; idle RSS median ${median(r.rss).toFixed(1)} MiB, 3 s later ${median(r.rssLater).toFixed(1)} MiB`,
      );
      console.error(lines.at(-1));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  `node ${process.version}, ${runs} runs each, alternated; spawn to the first search result (initialize + tools/list + one search)`,
);
for (const line of lines) console.log(line);
if (!("entry" in reference)) console.log(`reference server skipped: ${reference.skipped}`);
