/**
 * What processing one appended conversation turn costs as the conversation grows: each turn is
 * appended through the v5 API (append, instant dreaming) to the embedded engine on a temp SQLite
 * file, and timed until its memories are searchable (chunked, indexed, extracted, stored). Reports
 * the median of the turns around turns 1, 100 and 1,000, and the memories and chunks at the end.
 *
 *   npx tsx bench/append-processing.ts [turns=1000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryClient } from "../src/client/index.js";
import { openEngine } from "../src/engine/index.js";

const TURNS = Number(process.argv[2] ?? 1000);
const KEY = "mk_bench_append_processing_0123456789";
/** Turns around each reported one (its window's median is reported). */
const WINDOW = 5;
const AT = [1, 100, 1000].filter((t) => t <= TURNS);

const NAMES = ["Ana", "Ben", "Chloe", "Dev", "Eli", "Fay", "Gus", "Hana"];
const CITIES = ["Lisbon", "Oslo", "Quito", "Hanoi", "Lagos", "Perth", "Riga", "Cusco"];
const JOBS = ["baker", "nurse", "pilot", "potter", "tailor", "welder", "chemist", "florist"];
/** A user turn with a fact (a person, a city, a job: 512 different ones) and the assistant's reply. */
function turn(i: number): string {
  const k = (i - 1) >> 1;
  const [name, city, job] = [NAMES[k % 8], CITIES[(k >> 3) % 8], JOBS[(k >> 6) % 8]];
  return i % 2
    ? `user: My friend ${name} moved to ${city} and works as a ${job} there.`
    : `assistant: So ${name} is a ${job} in ${city} now.`;
}

const dir = mkdtempSync(join(tmpdir(), "memctx-append-processing-"));
const engine = await openEngine({ dataDir: dir, apiKey: KEY, log: () => {} });
await engine.ready();
const ns = new MemoryClient({ apiKey: KEY, fetch: engine.fetch }).ns("bench");
const ms: number[] = [];
try {
  for (let i = 1; i <= TURNS; i++) {
    const t0 = performance.now();
    const res = await ns.documents.add({
      id: "conv-grow",
      content: turn(i),
      append: true,
      dreaming: "instant",
    });
    await ns.documents.waitFor(res.id, { until: "memories", timeoutMs: 60_000, pollIntervalMs: 2 });
    ms.push(performance.now() - t0);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const at = (t: number) => median(ms.slice(Math.max(0, t - 1 - WINDOW), t + WINDOW));
  const memories = (await ns.memories.list({ limit: 1 })).pagination.totalItems;
  const chunks = (await ns.chunks.list({ limit: 1 })).pagination.totalItems;
  console.log(
    `node ${process.version}, ${TURNS} turns appended one at a time, each timed until its memories are searchable (median of turns t±${WINDOW}):`,
  );
  console.log(AT.map((t) => `turn ${t}: ${at(t).toFixed(1)} ms`).join(", "));
  console.log(`at the end: ${chunks} chunks, ${memories} memories`);
} finally {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}
