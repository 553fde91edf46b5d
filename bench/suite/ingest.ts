/**
 * Ingest throughput through the public API in process (MemoryClient over engine.fetch), default
 * engine settings (2 workers, offline extractor, dynamic dreaming with its debounce): documents per
 * second accepted, to `done` (chunks searchable) and to memories ready (dreamingStatus done).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { MemoryClient } from "../../src/client/index.js";
import { openEngine } from "../../src/engine/index.js";
import { API_KEY, type BackendName, type Budget, backendName, newStorage, round } from "./common.js";
import { Corpus } from "./corpus.js";

export interface IngestResult {
  /** The store's backend (absent in results from before `--backend`: SQLite). */
  backend?: BackendName;
  documents: number;
  charsPerDocument: number;
  concurrency: number;
  acceptedPerSecond: number | null;
  donePerSecond: number | null;
  memoriesPerSecond: number | null;
  secondsToDone: number | null;
  secondsToMemories: number | null;
  memories: number;
  chunks: number;
  /**
   * How late the request loop ran its timers while all this went on (ms): what any other request
   * would have waited, at worst, behind the adds and the processing.
   */
  loopDelayMs: { p50: number; p99: number; max: number };
  stopped: boolean;
}

export async function benchIngest(documents: number, budget: Budget): Promise<IngestResult> {
  const dir = mkdtempSync(join(tmpdir(), "memctx-bench-ingest-"));
  const storage = newStorage("ingest");
  const engine = await openEngine({
    dataDir: dir,
    databaseUrl: storage.databaseUrl,
    apiKey: API_KEY,
    log: () => {},
  });
  const client = new MemoryClient({ apiKey: API_KEY, fetch: (r) => engine.fetch(r), maxRetries: 0 });
  const corpus = new Corpus();
  const docs = Array.from({ length: documents }, (_, i) => corpus.document(i));
  const ns = client.ns("ingest");
  const db = engine.context.db;
  const count = async (where: string) =>
    ((await db.prepare(`SELECT count(*) AS n FROM documents WHERE ${where}`).get()) as { n: number }).n;
  const concurrency = 8;
  let accepted = 0;
  let secondsToDone: number | null = null;
  let secondsToMemories: number | null = null;
  let acceptedAt = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const t0 = performance.now();
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < docs.length && !budget.spent()) {
          const d = docs[next++]!;
          await ns.documents.add({ content: d.text, date: d.date });
          accepted++;
        }
      }),
    );
    acceptedAt = (performance.now() - t0) / 1000;
    while (!budget.spent()) {
      const elapsed = (performance.now() - t0) / 1000;
      if (secondsToDone === null && (await count("status = 'done'")) >= accepted) secondsToDone = elapsed;
      if (secondsToMemories === null && (await count("dreaming_status = 'done'")) >= accepted)
        secondsToMemories = elapsed;
      if (secondsToDone !== null && secondsToMemories !== null) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const rows = async (table: string) =>
      ((await db.prepare(`SELECT count(*) AS n FROM ${table}`).get()) as { n: number }).n;
    const rate = (s: number | null) => (s ? round(accepted / s, 1) : null);
    return {
      backend: backendName(),
      documents: accepted,
      charsPerDocument: Math.round(docs.reduce((a, d) => a + d.text.length, 0) / docs.length),
      concurrency,
      acceptedPerSecond: rate(acceptedAt),
      donePerSecond: rate(secondsToDone),
      memoriesPerSecond: rate(secondsToMemories),
      secondsToDone: round(secondsToDone, 2),
      secondsToMemories: round(secondsToMemories, 2),
      memories: await rows("memories"),
      chunks: await rows("chunks"),
      loopDelayMs: {
        p50: round(loop.percentile(50) / 1e6, 1) ?? 0,
        p99: round(loop.percentile(99) / 1e6, 1) ?? 0,
        max: round(loop.max / 1e6, 1) ?? 0,
      },
      stopped: budget.stopped,
    };
  } finally {
    loop.disable();
    await client.close();
    await engine.close();
    await storage.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
