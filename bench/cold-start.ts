/**
 * Cold start and idle memory beside the reference memory server, in one run on one machine:
 * spawn to the first tool result (initialize, tools/list, one search on an empty store) and the
 * resident memory after it. Alternates the two servers so that machine noise falls on both.
 *
 *   npm run build && npx tsx bench/cold-start.ts [runs=9]
 *
 * BENCH_MEMCTX_MAINS=a/main.js,b/main.js compares several builds (each beside node_modules).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type McpChild, NODE, ROOT, rssMiB, startMcp } from "./suite/common.js";
import { serverMemoryEntry, startServerMemory } from "./suite/server-memory.js";

const runs = Number(process.argv[2] ?? 9);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(start: () => Promise<McpChild>, first: (c: McpChild) => Promise<unknown>) {
  const t0 = performance.now();
  const child = await start();
  await child.client.listTools();
  await first(child);
  const ms = performance.now() - t0;
  // Idle: a moment after the first answer, as a client holding the server between turns sees it;
  // and 3 s later (memctx loads its processing pipeline only once there is work: none here).
  await new Promise((r) => setTimeout(r, 500));
  const rss = rssMiB(child.pid);
  await new Promise((r) => setTimeout(r, 2500));
  const rssLater = rssMiB(child.pid);
  await child.close();
  return { ms, rss, rssLater };
}

const reference = await serverMemoryEntry();
const mains = (process.env.BENCH_MEMCTX_MAINS ?? join(ROOT, "dist/cli/main.js")).split(",");
const results: Record<string, { ms: number[]; rss: number[]; rssLater: number[] }> = {};
for (const main of mains) results[main] = { ms: [], rss: [], rssLater: [] };
if ("entry" in reference) results.reference = { ms: [], rss: [], rssLater: [] };
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), "memctx-cold-"));
  try {
    for (const main of mains) {
      const m = await measure(
        async () =>
          await startMcp(NODE, [main, "mcp", "--namespace", "bench"], {
            HOME: dir,
            MEMCTX_DATA_DIR: join(dir, main.replace(/\W/g, "_")),
          }),
        (c) => c.call("search", { query: "what does Ana like?" }),
      );
      results[main]!.ms.push(m.ms);
      results[main]!.rss.push(m.rss ?? Number.NaN);
      results[main]!.rssLater.push(m.rssLater ?? Number.NaN);
    }
    if ("entry" in reference) {
      const r = await measure(
        () => startServerMemory(reference.entry, join(dir, "memory.jsonl")),
        (c) => c.call("search_nodes", { query: "Ana" }),
      );
      results.reference!.ms.push(r.ms);
      results.reference!.rss.push(r.rss ?? Number.NaN);
      results.reference!.rssLater.push(r.rssLater ?? Number.NaN);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  `node ${process.version}, ${runs} runs each, spawn to first tool result (initialize + tools/list + one call)`,
);
for (const [name, r] of Object.entries(results)) {
  console.log(
    `${name} cold start median ${median(r.ms).toFixed(0)} ms (min ${Math.min(...r.ms).toFixed(0)}, max ${Math.max(...r.ms).toFixed(0)}); idle RSS median ${median(r.rss).toFixed(1)} MiB, 3 s later ${median(r.rssLater).toFixed(1)} MiB`,
  );
}
if (!("entry" in reference)) console.log(`reference server skipped: ${reference.skipped}`);
