import { createApp } from "./app.js";
import type { EngineContext } from "./context.js";
import { allowPrivateNetworkFromEnv } from "./ingest/fetch.js";
import type { Extractor } from "./memory/extract/types.js";
import { chatModelFromEnv } from "./models/chat.js";
import { type Embedder, embedderFromEnv } from "./models/embedder.js";
import { type Dreamer, noDreaming } from "./pipeline/dreamer.js";
import { JobQueue } from "./pipeline/queue.js";
import { WorkerPool } from "./pipeline/worker.js";
import { openDatabase } from "./store/db.js";
import { countKeys, createKey, LOCAL_ORGANIZATION, registerKey } from "./store/organizations.js";

export type { EngineContext } from "./context.js";
export { defaultDataDir } from "./data-dir.js";
export type { DreamContext, Dreamer, IndexingDocument } from "./pipeline/dreamer.js";

export interface EngineOptions {
  /** Holds memctx.db (SQLite, WAL). */
  dataDir: string;
  /** Registered for the local organization at open (idempotent). */
  apiKey?: string;
  /** Background processing loops in this process; 0 = none (another process does the work). Default 2. */
  workers?: number;
  /** URL fetching may reach private/loopback addresses (tests; env MEMCTX_ALLOW_PRIVATE_NETWORK=1). */
  allowPrivateNetwork?: boolean;
  /** Vectors when configured; default from the environment, else none. */
  embedder?: Embedder | null;
  /** Memory extraction; default offline. */
  extractor?: Extractor;
  /**
   * Memory generation after indexing, or a factory that installs it on the open engine (it may
   * register job kinds with `ctx.workers`). Default: none (dreaming is marked done at once).
   */
  dreamer?: Dreamer | ((ctx: EngineContext) => Dreamer);
  /** A job whose worker stopped renewing is claimed again after this long. Default 30 s (env MEMCTX_JOB_LEASE_MS). */
  jobLeaseMs?: number;
  /** Where the engine reports background errors. Default: standard error. */
  log?: (message: string) => void;
}

export interface Engine {
  /** The whole HTTP API as a fetch handler. */
  fetch(req: Request): Promise<Response>;
  /** Stops the workers (their jobs are resumed later) and closes the database. */
  close(): Promise<void>;
  /** A new bearer key for `organization` (default: the local one); only its hash is stored. */
  createKey(organization?: string): string;
  /** A first key for the local organization when it has none yet (first start of `memctx serve`), else null. */
  createFirstKey(): string | null;
  readonly dataDir: string;
  /** For services built on the engine (connectors, memory) and for tests. */
  readonly context: EngineContext;
  /**
   * Loads the processing pipeline now if it has not loaded yet, and resolves once the workers run
   * (its extractor is then in `context.extractor`). The API answers before: no request waits for it.
   */
  ready(): Promise<void>;
  /** What the engine runs, for startup lines: known from the settings, before the pipeline loads. */
  readonly models: { embedder: string; extractor: string };
}

/**
 * The pipeline loads when the first job is queued, or this long after the engine opens (jobs left
 * by an earlier run), whichever comes first: a session's first answers never wait for its modules.
 */
const PIPELINE_LOAD_DELAY_MS = 2000;

export const DEFAULT_WORKERS = 2;
export const DEFAULT_JOB_LEASE_MS = 30_000;

export async function openEngine(opts: EngineOptions): Promise<Engine> {
  const db = openDatabase(opts.dataDir);
  const log = opts.log ?? ((m: string) => process.stderr.write(`memctx: ${m}\n`));
  if (opts.apiKey) registerKey(db, opts.apiKey, LOCAL_ORGANIZATION);
  const queue = new JobQueue(db);
  const leaseMs = opts.jobLeaseMs ?? (Number(process.env.MEMCTX_JOB_LEASE_MS) || DEFAULT_JOB_LEASE_MS);
  const workers = new WorkerPool({ db, queue, workers: opts.workers ?? DEFAULT_WORKERS, leaseMs, log });
  const ctx: EngineContext = {
    db,
    dataDir: opts.dataDir,
    queue,
    workers,
    allowPrivateNetwork: opts.allowPrivateNetwork ?? allowPrivateNetworkFromEnv(),
    embedder: opts.embedder === undefined ? embedderFromEnv() : opts.embedder,
    extractor: opts.extractor,
    dreamer: noDreaming,
    log,
  };
  // A wrong model setting fails the start, as before; the extractor itself is made with the pipeline.
  const chat = opts.extractor ? null : chatModelFromEnv();
  const models = {
    embedder: ctx.embedder ? ctx.embedder.model : "none (lexical search only)",
    extractor: opts.extractor?.name ?? (chat ? `${chat.model} (MEMCTX_LLM_URL)` : "offline"),
  };
  const app = createApp(ctx);
  // The pipeline (extraction with its NLP model and date parser, chunking, dreaming) is the largest
  // part of the engine and no request needs it: it loads later (PIPELINE_LOAD_DELAY_MS). Jobs are
  // rows: whatever is added meanwhile waits in the queue.
  let pipeline: Promise<void> | undefined;
  const load = () => {
    pipeline ??= loadPipeline();
    return pipeline;
  };
  const loadPipeline = async () => {
    const [{ extractorFromEnv }, { installDreaming }, { documentJobFailed, documentJobHandler }] =
      await Promise.all([
        import("./memory/extract/index.js"),
        import("./memory/dreamer.js"),
        import("./pipeline/process-document.js"),
      ]);
    ctx.extractor ??= extractorFromEnv();
    if (typeof opts.dreamer === "function") ctx.dreamer = opts.dreamer(ctx);
    else ctx.dreamer = opts.dreamer ?? installDreaming(ctx);
    workers.register("document", documentJobHandler(ctx), documentJobFailed(ctx));
    workers.start();
  };
  const closing = new AbortController();
  void queue.idle(PIPELINE_LOAD_DELAY_MS, closing.signal).then(() => {
    if (closing.signal.aborted) return;
    load().catch((err: unknown) =>
      log(
        `the processing pipeline failed to load: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      ),
    );
  });
  let closed: Promise<void> | undefined;
  return {
    fetch: async (req) => app.fetch(req),
    close: () => {
      closing.abort();
      closed ??= (pipeline ?? Promise.resolve())
        .catch(() => {})
        .then(() => workers.stop())
        .then(() => db.close());
      return closed;
    },
    ready: load,
    models,
    createKey: (organization = LOCAL_ORGANIZATION) => createKey(db, organization),
    createFirstKey: () =>
      countKeys(db, LOCAL_ORGANIZATION) === 0 ? createKey(db, LOCAL_ORGANIZATION) : null,
    dataDir: opts.dataDir,
    context: ctx,
  };
}
