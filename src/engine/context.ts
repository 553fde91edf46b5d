import type { DiskReserve, DiskReserveSetting } from "./disk-reserve.js";
import type { Extractor } from "./memory/extract/types.js";
import type { Embedder } from "./models/embedder.js";
import type { Dreamer } from "./pipeline/dreamer.js";
import type { JobQueue } from "./pipeline/queue.js";
import type { WorkerPool } from "./pipeline/worker.js";
import type { Db } from "./store/db.js";

/** Limits that protect a shared server; null is no limit (the embedded engine's default). */
export interface EngineLimits {
  /** Requests per minute that one API key may make (a token bucket: bursts up to this many). */
  requestsPerMinute: number | null;
  /** Document tokens (4 characters of content each) that one organization may hold. */
  documentTokenQuota: number | null;
  /** Free space kept on the data directory's file system: new content is refused below it (SQLite only). */
  diskReserve: DiskReserveSetting | null;
}

export const NO_LIMITS: EngineLimits = {
  requestsPerMinute: null,
  documentTokenQuota: null,
  diskReserve: null,
};

/** What routes, services and pipeline stages share within one open engine. */
export interface EngineContext {
  db: Db;
  dataDir: string;
  queue: JobQueue;
  workers: WorkerPool;
  allowPrivateNetwork: boolean;
  /** The deployment's secret screening (MEMCTX_SECRET_SCREENING); a namespace's own setting wins. */
  secretScreening: boolean;
  embedder: Embedder | null;
  extractor: Extractor | undefined;
  dreamer: Dreamer;
  log: (message: string) => void;
  /** Absent: no limits (processing threads, which serve no requests). */
  limits?: EngineLimits;
  /** The time the limits read (EngineOptions.clock); absent: Date.now. */
  clock?: () => number;
  /** The reserve of limits.diskReserve on the data directory; absent without one, or on PostgreSQL. */
  disk?: DiskReserve;
}
