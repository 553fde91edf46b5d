import type { Extractor } from "./memory/extract/types.js";
import type { Embedder } from "./models/embedder.js";
import type { Dreamer } from "./pipeline/dreamer.js";
import type { JobQueue } from "./pipeline/queue.js";
import type { WorkerPool } from "./pipeline/worker.js";
import type { Db } from "./store/db.js";

/** What routes, services and pipeline stages share within one open engine. */
export interface EngineContext {
  db: Db;
  dataDir: string;
  queue: JobQueue;
  workers: WorkerPool;
  allowPrivateNetwork: boolean;
  embedder: Embedder | null;
  extractor: Extractor | undefined;
  dreamer: Dreamer;
  log: (message: string) => void;
}
