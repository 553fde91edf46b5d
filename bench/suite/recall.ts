/**
 * Recall on LoCoMo (dev split) through the real engine: each session one conversation document
 * with its date (../shared/data/locomo/README.md), instant dreaming so `done` means memories, then
 * every question of categories 1-4 searched in hybrid, memories-only and chunks-only mode. The
 * metric (answer coverage at a character budget) and the plain BM25 baseline are bench/locomo's
 * ports of reference_score.py, run on the same conversations in the same run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryClient } from "../../src/client/index.js";
import { openEngine } from "../../src/engine/index.js";
import { bm25Baseline } from "../locomo/baseline.js";
import { DATA_PATH, type Question, type Sample } from "../locomo/data.js";
import { ingestSample } from "../locomo/engine.js";
import { coverage } from "../locomo/metric.js";
import { API_KEY, type BackendName, type Budget, backendName, newStorage, round } from "./common.js";

export const BUDGETS = [2000, 3000, 6000] as const;
export const CATEGORIES: Record<number, string> = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
};
export type Mode = "hybrid" | "memories" | "chunks";
export const MODES: Mode[] = ["hybrid", "memories", "chunks"];
/** The API's maximum: coverage at 3000 characters needs about 30 hits (bench/locomo/RECIPE.md). */
export const SEARCH_LIMIT = 100;

/** Sum of coverage per budget, overall and per category. */
export class CoverageSums {
  private readonly sums = new Map<string, { sum: number; n: number }>();
  add(q: Question, texts: string[]): void {
    for (const b of BUDGETS) {
      const c = coverage(q.answer, texts, b);
      if (c === null) continue;
      for (const key of [`${b}/all`, `${b}/${q.category}`]) {
        const e = this.sums.get(key) ?? { sum: 0, n: 0 };
        e.sum += c;
        e.n++;
        this.sums.set(key, e);
      }
    }
  }
  mean(budget: number, category: number | "all" = "all"): number | null {
    const e = this.sums.get(`${budget}/${category}`);
    return e && e.n > 0 ? round(e.sum / e.n, 3) : null;
  }
  count(budget: number): number {
    return this.sums.get(`${budget}/all`)?.n ?? 0;
  }
}

export const scored = (s: Sample) => s.qa.filter((q) => q.category !== 5);

export interface CoverageRow {
  system: string;
  budget: number;
  all: number | null;
  byCategory: Record<string, number | null>;
  questions: number;
  /** Mean hits per question, and their characters: how much each mode hands back. */
  hitsPerQuestion?: number | null;
  charsPerQuestion?: number | null;
}

export function coverageRows(
  system: string,
  sums: CoverageSums,
  returned?: { hits: number; chars: number; questions: number },
): CoverageRow[] {
  const per = (x: number | undefined) => (returned?.questions ? round(x! / returned.questions, 1) : null);
  return BUDGETS.map((b) => ({
    hitsPerQuestion: per(returned?.hits),
    charsPerQuestion: per(returned?.chars),
    system,
    budget: b,
    all: sums.mean(b),
    byCategory: Object.fromEntries(
      Object.entries(CATEGORIES).map(([c, name]) => [name, sums.mean(b, Number(c))]),
    ),
    questions: sums.count(b),
  }));
}

export interface RecallResult {
  skipped?: string;
  /** The store's backend (absent in results from before `--backend`: SQLite). */
  backend?: BackendName;
  samples: string[];
  sessions: number;
  turns: number;
  ingestSeconds: number | null;
  memories: number;
  chunks: number;
  rows: CoverageRow[];
  baseline: { budget: number; coverage: number; questions: number }[];
  stopped: boolean;
}

export interface LocomoStore {
  dataDir: string;
  /** Where the engine's data is: openEngine's databaseUrl and the children's environment. */
  databaseUrl: string | undefined;
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Ingests `samples` into a fresh data directory as a user would; kept for the side-by-side run. */
export async function ingestLocomo(samples: Sample[]): Promise<{
  store: LocomoStore;
  seconds: number;
  sessions: number;
  turns: number;
  memories: number;
  chunks: number;
}> {
  const dataDir = mkdtempSync(join(tmpdir(), "memctx-bench-locomo-"));
  const storage = newStorage("locomo");
  const engine = await openEngine({
    dataDir,
    databaseUrl: storage.databaseUrl,
    apiKey: API_KEY,
    log: () => {},
  });
  const client = new MemoryClient({ apiKey: API_KEY, fetch: (r) => engine.fetch(r), maxRetries: 0 });
  let sessionCount = 0;
  let turns = 0;
  const t0 = performance.now();
  for (const sample of samples) {
    const added = await ingestSample(client, sample);
    sessionCount += added.sessions;
    turns += added.turns;
  }
  const seconds = (performance.now() - t0) / 1000;
  const total = async (kind: "memories" | "chunks") => {
    let n = 0;
    for (const s of samples)
      n += (await client.ns(s.sample_id)[kind].list({ limit: 1 })).pagination.totalItems ?? 0;
    return n;
  };
  const memories = await total("memories");
  const chunks = await total("chunks");
  await client.close();
  await engine.close();
  return {
    store: {
      dataDir,
      databaseUrl: storage.databaseUrl,
      env: storage.env,
      close: async () => {
        await storage.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    },
    seconds,
    sessions: sessionCount,
    turns,
    memories,
    chunks,
  };
}

export async function benchRecall(
  samples: Sample[] | null,
  budget: Budget,
): Promise<{ result: RecallResult; store: LocomoStore | null }> {
  const empty = {
    samples: [],
    sessions: 0,
    turns: 0,
    ingestSeconds: null,
    memories: 0,
    chunks: 0,
    rows: [],
    baseline: [],
    stopped: false,
  };
  if (samples === null) {
    return { result: { ...empty, skipped: `LoCoMo data not found at ${DATA_PATH}` }, store: null };
  }
  const baseline = BUDGETS.map((b) => {
    const { figure, n } = bm25Baseline(samples, b);
    return { budget: b, coverage: round(figure, 3)!, questions: n };
  });
  const ingest = await ingestLocomo(samples);
  const engine = await openEngine({
    dataDir: ingest.store.dataDir,
    databaseUrl: ingest.store.databaseUrl,
    apiKey: API_KEY,
    workers: 0,
    log: () => {},
  });
  const client = new MemoryClient({ apiKey: API_KEY, fetch: (r) => engine.fetch(r), maxRetries: 0 });
  const rows: CoverageRow[] = [];
  try {
    for (const mode of MODES) {
      const sums = new CoverageSums();
      const returned = { hits: 0, chars: 0, questions: 0 };
      for (const sample of samples) {
        for (const q of scored(sample)) {
          if (budget.spent()) break;
          const res = await client
            .ns(sample.sample_id)
            .search({ query: q.question, searchMode: mode, limit: SEARCH_LIMIT });
          const texts = res.results.map((r) => r.memory ?? r.chunk ?? "");
          sums.add(q, texts);
          returned.questions++;
          returned.hits += texts.length;
          returned.chars += texts.reduce((a, t) => a + t.length, 0);
        }
      }
      rows.push(...coverageRows(`memctx ${mode}`, sums, returned));
    }
  } finally {
    await client.close();
    await engine.close();
  }
  return {
    result: {
      backend: backendName(),
      samples: samples.map((s) => s.sample_id),
      sessions: ingest.sessions,
      turns: ingest.turns,
      ingestSeconds: round(ingest.seconds, 2),
      memories: ingest.memories,
      chunks: ingest.chunks,
      rows,
      baseline,
      stopped: budget.stopped,
    },
    store: ingest.store,
  };
}
