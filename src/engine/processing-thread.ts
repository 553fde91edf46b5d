import { parentPort, workerData } from "node:worker_threads";
import { createEngineContext } from "./context.js";
import { extractorFromEnv } from "./memory/extract/index.js";
import { trimAfterBusySpells } from "./memory-trim.js";
import { embedderFromEnv } from "./models/embedder-from-env.js";
import type { FromThread, ThreadConfig, ToThread } from "./pipeline/threads.js";
import { installProcessing } from "./processing.js";
import { checkpoint, openDatabase } from "./store/db.js";

/**
 * A processing thread (see threads.ts): its own connection to the data directory and its job
 * loops, with the engine's default extractor, embedder and dreaming.
 */
const config = workerData as ThreadConfig;
const CHECKPOINT_MS = 10_000;
const port = parentPort!;
const send = (m: FromThread) => port.postMessage(m);
const log = (message: string) => send({ type: "log", message });

const db = await openDatabase(config.dataDir, {
  writeLock: config.writeLock,
  databaseUrl: config.databaseUrl,
  cache: "writes",
  processingLoops: config.loops ?? 1,
  log,
});
// Jobs this thread commits (a dream batch, a sync's documents) wake the other threads too.
const ctx = createEngineContext({
  db,
  dataDir: config.dataDir,
  remoteDatabase: config.databaseUrl !== undefined,
  loops: config.loops ?? 1,
  leaseMs: config.leaseMs,
  diskFullRetryMs: config.diskFullRetryMs,
  wakeOthers: () => send({ type: "wake" }),
  allowPrivateNetwork: config.allowPrivateNetwork,
  secretScreening: config.secretScreening,
  embedder: config.embedder === "none" ? null : embedderFromEnv(),
  extractor: extractorFromEnv(),
  log,
});
const { queue, workers } = ctx;
installProcessing(ctx);
// The engine's own connection leaves checkpoints to its threads (store/db.ts OpenOptions): this
// one's commits checkpoint past the threshold, and an idle thread still copies what requests wrote.
workers.every(CHECKPOINT_MS, () => checkpoint(db));
workers.start();
// This thread's heap, grown by a backlog of documents, is given back once the backlog is done.
const trimmer = trimAfterBusySpells();

port.on("message", (m: ToThread) => {
  if (m.type === "wake") queue.wake(false);
  else if (m.type === "stop") {
    trimmer.stop();
    void workers.stop().then(async () => {
      await db.close();
      send({ type: "stopped" });
      port.close();
    });
  }
});
