/**
 * Does a namespace's search cost follow its own size, or the database's? Search p50 / p95 on a
 * namespace of one document (10 turns, 10 memories), first alone in the database, then beside a
 * namespace of the same organization holding `--memories` memories (default 100,000):
 *   npx tsx bench/neighbour-search.ts [--memories 100000] [--queries 300]
 * Hybrid search, limit 10, in process, LoCoMo questions as queries (bench/suite/corpus.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { MemoryClient } from "../src/client/index.js";
import { openEngine } from "../src/engine/index.js";
import { API_KEY, Budget, timeQueries } from "./suite/common.js";
import { Corpus, seedDocuments, TURNS_PER_DOCUMENT } from "./suite/corpus.js";

const { values } = parseArgs({
  options: { memories: { type: "string", default: "100000" }, queries: { type: "string", default: "300" } },
});
const corpus = new Corpus();
const queries = corpus.questions.slice(0, Number(values.queries));
const dir = mkdtempSync(join(tmpdir(), "memctx-neighbour-"));
const engine = await openEngine({ dataDir: dir, apiKey: API_KEY, workers: 0, log: () => {} });
const client = new MemoryClient({ apiKey: API_KEY, fetch: (r) => engine.fetch(r), maxRetries: 0 });
const measure = async (namespace: string) =>
  await timeQueries(queries, (q) => client.ns(namespace).search({ query: q, limit: 10 }), new Budget(300));
try {
  await seedDocuments(engine, corpus, "small", 0, 1);
  const alone = await measure("small");
  const t0 = performance.now();
  const docs = Math.ceil(Number(values.memories) / TURNS_PER_DOCUMENT);
  await seedDocuments(engine, corpus, "big", 1, 1 + docs);
  await engine.context.db.exec("PRAGMA optimize");
  const seeded = (performance.now() - t0) / 1000;
  const beside = await measure("small");
  const big = await measure("big");
  const f = (p: { p50: number; p95: number }) => `p50 ${p.p50.toFixed(2)} ms, p95 ${p.p95.toFixed(2)} ms`;
  console.log(`1-document namespace alone: ${f(alone)}`);
  console.log(
    `1-document namespace beside ${values.memories} memories (seeded in ${seeded.toFixed(0)} s): ${f(beside)}`,
  );
  console.log(`ratio p50 ${(beside.p50 / alone.p50).toFixed(2)}, p95 ${(beside.p95 / alone.p95).toFixed(2)}`);
  console.log(`the large namespace itself: ${f(big)}`);
} finally {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}
