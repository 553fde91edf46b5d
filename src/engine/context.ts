import { type DiskReserve, type DiskReserveSetting, hasRoom } from "./disk-reserve.js";
import type { Extractor } from "./memory/extract/types.js";
import type { Embedder } from "./models/embedder.js";
import { type Dreamer, noDreaming } from "./pipeline/dreamer.js";
import { JobQueue } from "./pipeline/queue.js";
import { WorkerPool } from "./pipeline/worker.js";
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

/** What an engine's context is made of (createEngineContext). */
export interface EngineContextParts {
  db: Db;
  dataDir: string;
  /** The database is PostgreSQL's: its disk is its server's, not the data directory's. */
  remoteDatabase: boolean;
  /** Job loops in this thread (0: processing runs in threads of its own, or elsewhere). */
  loops: number;
  leaseMs: number;
  diskFullRetryMs?: number | undefined;
  /** Called when this context queues a job, to wake other threads' loops; absent: none. */
  wakeOthers?: (() => void) | undefined;
  allowPrivateNetwork: boolean;
  secretScreening: boolean;
  embedder: Embedder | null;
  extractor: Extractor | undefined;
  log: (message: string) => void;
  limits?: EngineLimits;
  clock?: () => number;
}

/**
 * The one place an engine's context is made, in the engine's thread (index.ts) as in each
 * processing thread (processing-thread.ts): its job queue, its worker pool (which waits for room
 * on the data directory's disk after a full one, on SQLite), and no dreaming until processing
 * installs it (processing.ts).
 */
export function createEngineContext(p: EngineContextParts): EngineContext {
  const queue = new JobQueue(p.db, p.wakeOthers);
  const workers = new WorkerPool({
    db: p.db,
    queue,
    workers: p.loops,
    leaseMs: p.leaseMs,
    diskFullRetryMs: p.diskFullRetryMs,
    ...(p.remoteDatabase ? {} : { room: () => hasRoom(p.dataDir) }),
    log: p.log,
  });
  return {
    db: p.db,
    dataDir: p.dataDir,
    queue,
    workers,
    allowPrivateNetwork: p.allowPrivateNetwork,
    secretScreening: p.secretScreening,
    embedder: p.embedder,
    extractor: p.extractor,
    dreamer: noDreaming,
    log: p.log,
    ...(p.limits ? { limits: p.limits } : {}),
    ...(p.clock ? { clock: p.clock } : {}),
  };
}
