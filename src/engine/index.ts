import { createApp } from "./app.js";
import { createEngineContext, type EngineContext, type EngineLimits, NO_LIMITS } from "./context.js";
import { DiskReserve, type DiskReserveSetting, type DiskState } from "./disk-reserve.js";
import { allowPrivateNetworkFromEnv } from "./ingest/fetch.js";
import type { Extractor } from "./memory/extract/types.js";
import { chatModelFromEnv } from "./models/chat.js";
import type { Embedder } from "./models/embedder.js";
import { embedderFromEnv } from "./models/embedder-from-env.js";
import type { Dreamer } from "./pipeline/dreamer.js";
import { ProcessingThreads } from "./pipeline/threads.js";
import { removeStaleSpools } from "./routes/spool.js";
import { preloadSearch } from "./search/preload.js";
import { secretScreeningFromEnv } from "./services/screening.js";
import { hasScheduledConnectors } from "./store/connectors.js";
import { type DatabaseState, databaseState, openDatabase } from "./store/db.js";
import { namespacesAwaitingDreams } from "./store/documents.js";
import { hasOpenJobs, unprocessedBytes } from "./store/jobs.js";
import { countKeys, createKey, LOCAL_ORGANIZATION, registerKey } from "./store/organizations.js";
import { upgradeStoredRows } from "./store/upgrade.js";
import { writeLockOf } from "./store/write-lock.js";

export type { EngineContext } from "./context.js";
export { defaultDataDir } from "./data-dir.js";
export type { DreamContext, Dreamer, IndexingDocument } from "./pipeline/dreamer.js";

export interface EngineOptions {
  /** Holds memctx.db (SQLite, WAL), or with a database URL only the secret key. */
  dataDir: string;
  /**
   * A PostgreSQL URL (`postgres://user:pass@host:5432/db`, TLS and pool options in the URL; memctx's
   * own `schema=NAME` picks the schema). Default: MEMCTX_DATABASE_URL; unset: SQLite in `dataDir`.
   */
  databaseUrl?: string | undefined;
  /** Registered for the local organization at open (idempotent). */
  apiKey?: string;
  /** Background processing loops in this process; 0 = none (another process does the work). Default 2. */
  workers?: number;
  /**
   * Limits that protect a shared server (`memctx serve --rate-limit`, `--document-token-quota`).
   * Default: none; the engine does not read them from the environment (an agent's own embedded
   * engine is never limited).
   */
  limits?: Partial<EngineLimits>;
  /** What the limits read the time from (the rate limit's refill, the disk reserve's reading). Default Date.now; tests move it. */
  clock?: () => number;
  /** URL fetching may reach private/loopback addresses (tests; env MEMCTX_ALLOW_PRIVATE_NETWORK=1). */
  allowPrivateNetwork?: boolean;
  /**
   * Secrets (PINs, passwords, keys, card numbers, IBANs) are replaced by markers in what is added,
   * unless a namespace says otherwise. Default: on, unless MEMCTX_SECRET_SCREENING=off.
   */
  secretScreening?: boolean;
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
  /** A job stopped by a full disk runs again after this long, its attempt not counted. Default 30 s. */
  diskFullRetryMs?: number;
  /** Where the engine reports background errors. Default: standard error. */
  log?: (message: string) => void;
  /**
   * Run the job loops in worker threads (default), so that requests never wait behind a large
   * document. A custom extractor, embedder or dreamer cannot cross to a thread: with one, the
   * loops run in the engine's own thread, as with `threads: false`. Default: on, unless the
   * environment says MEMCTX_THREADS=0.
   */
  threads?: boolean;
}

export interface Engine {
  /** The whole HTTP API as a fetch handler. */
  fetch(req: Request): Promise<Response>;
  /** Stops the workers (their jobs are resumed later) and closes the database. */
  close(): Promise<void>;
  /** A new bearer key for `organization` (default: the local one); only its hash is stored. */
  createKey(organization?: string): Promise<string>;
  /** A first key for the local organization when it has none yet (first start of `memctx serve`), else null. */
  createFirstKey(): Promise<string | null>;
  readonly dataDir: string;
  /** For services built on the engine (connectors, memory) and for tests. */
  readonly context: EngineContext;
  /**
   * Starts processing now if it has not started yet: its threads, or (without threads) its modules
   * in this thread, and resolves once the workers run (without threads its extractor is then in
   * `context.extractor`). The API answers before: no request waits for it.
   */
  ready(): Promise<void>;
  /** Reads the tables a search reads now, in the background, so that the first search need not. */
  preloadSearch(): Promise<void>;
  /** Whether processing has started (see PIPELINE_LOAD_DELAY_MS: it waits for work). */
  readonly processingStarted: boolean;
  /** How many times the store has been asked whether work waits, while processing had not started. */
  readonly looksForWork: number;
  /** What the engine runs, for startup lines: known from the settings, before the pipeline loads. */
  readonly models: { embedder: string; extractor: string };
  /** The storage backend and its schema version (read from the database). */
  database(): Promise<DatabaseState>;
  /** The data directory's free space and the reserve kept on it; null without a reserve (or on PostgreSQL). */
  diskState(): Promise<(DiskState & { setting: DiskReserveSetting }) | null>;
}

/**
 * The pipeline loads when the first job is queued here, or when the store shows work: looked at
 * this long after the engine opens (jobs left by an earlier run, documents a crash left without
 * their dream job, connectors that sync on a schedule), then every WORK_POLL_MS (jobs queued by
 * another process: the CLI, a replica that died). A session's first answers never wait for its
 * modules, and a server that only answers searches never holds them: a processing thread with
 * its modules cost 50 MiB of an idle `memctx serve` at 100k memories (243 against 293 MiB).
 */
const PIPELINE_LOAD_DELAY_MS = 2000;
const WORK_POLL_MS = 2000;

export const DEFAULT_WORKERS = 2;
export const DEFAULT_JOB_LEASE_MS = 30_000;

export async function openEngine(opts: EngineOptions): Promise<Engine> {
  const databaseUrl = opts.databaseUrl ?? (process.env.MEMCTX_DATABASE_URL || undefined);
  const log = opts.log ?? ((m: string) => process.stderr.write(`memctx: ${m}\n`));
  const leaseMs = opts.jobLeaseMs ?? (Number(process.env.MEMCTX_JOB_LEASE_MS) || DEFAULT_JOB_LEASE_MS);
  const loops = opts.workers ?? DEFAULT_WORKERS;
  const custom =
    opts.extractor !== undefined || opts.dreamer !== undefined || (opts.embedder ?? null) !== null;
  const allowPrivateNetwork = opts.allowPrivateNetwork ?? allowPrivateNetworkFromEnv();
  const secretScreening = opts.secretScreening ?? secretScreeningFromEnv();
  const threaded = (opts.threads ?? process.env.MEMCTX_THREADS !== "0") && !custom && loops > 0;
  // Processing in this thread writes the search index here: its connection is sized for that.
  const db = await openDatabase(opts.dataDir, {
    databaseUrl,
    cache: threaded || loops === 0 ? "reads" : "writes",
    // The threads checkpoint (processing-thread.ts): a request's large commit does not copy the WAL.
    checkpoints: !threaded,
    log,
  });
  if (opts.apiKey) await registerKey(db, opts.apiKey, LOCAL_ORGANIZATION);
  // Uploads a crash broke off left their spool files behind.
  const stale = await removeStaleSpools(opts.dataDir);
  if (stale > 0) log(`removed ${stale} upload file(s) left by a process that stopped mid-upload`);
  // Connectors written by a memctx that stored their secrets in plain text: sealed now.
  await upgradeStoredRows(db);
  const threads = threaded
    ? new ProcessingThreads(
        {
          dataDir: opts.dataDir,
          databaseUrl,
          leaseMs,
          diskFullRetryMs: opts.diskFullRetryMs,
          allowPrivateNetwork,
          secretScreening,
          embedder: opts.embedder === null ? "none" : "env",
          writeLock: writeLockOf(db),
        },
        log,
      )
    : null;
  const ctx = createEngineContext({
    db,
    dataDir: opts.dataDir,
    remoteDatabase: databaseUrl !== undefined,
    loops: threads ? 0 : loops,
    leaseMs,
    diskFullRetryMs: opts.diskFullRetryMs,
    wakeOthers: threads ? () => threads.wake() : undefined,
    allowPrivateNetwork,
    secretScreening,
    embedder: opts.embedder === undefined ? embedderFromEnv() : opts.embedder,
    extractor: opts.extractor,
    log,
    limits: { ...NO_LIMITS, ...opts.limits },
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  const { queue, workers } = ctx;
  // PostgreSQL keeps its data on its own server's disk: the data directory's is not the one that fills.
  const reserve = ctx.limits?.diskReserve;
  if (reserve && !databaseUrl)
    ctx.disk = new DiskReserve(opts.dataDir, reserve, () => unprocessedBytes(db), opts.clock);
  // A wrong model setting fails the start, as before; the extractor itself is made with the pipeline.
  const chat = opts.extractor ? null : chatModelFromEnv();
  const models = {
    embedder: ctx.embedder ? ctx.embedder.model : "none (lexical search only)",
    extractor: opts.extractor?.name ?? (chat ? `${chat.model} (MEMCTX_LLM_URL)` : "offline"),
  };
  const app = createApp(ctx);
  // Processing (extraction with its NLP model and date parser, chunking, dreaming, connector
  // syncs) is the largest part of the engine and no request needs it: its threads start, or its
  // modules load in this thread, when the first job is queued or PIPELINE_LOAD_DELAY_MS after
  // open (jobs left by an earlier run), whichever comes first. Jobs are rows: they wait meanwhile.
  let processing: Promise<void> | undefined;
  const start = () => {
    processing ??= startProcessing();
    return processing;
  };
  const startProcessing = async () => {
    if (threads) return threads.start(loops);
    const [{ extractorFromEnv }, { installProcessing }] = await Promise.all([
      import("./memory/extract/index.js"),
      import("./processing.js"),
    ]);
    ctx.extractor ??= extractorFromEnv();
    installProcessing(ctx, opts.dreamer);
    workers.start();
  };
  const closing = new AbortController();
  let looksForWork = 0;
  const workWaits = async (atOpen: boolean) => {
    try {
      return (
        (await hasOpenJobs(db)) ||
        (await hasScheduledConnectors(db)) ||
        (atOpen && (await namespacesAwaitingDreams(db)).length > 0)
      );
    } catch {
      return true; // a busy store, say: start, and let the workers look
    } finally {
      looksForWork++;
    }
  };
  void (async () => {
    // A wake: a job was committed here (even while the store was being asked), so work waits.
    const woken = () => queue.wakes > 0;
    await queue.idle(PIPELINE_LOAD_DELAY_MS, closing.signal);
    let atOpen = true;
    while (!closing.signal.aborted && processing === undefined && !woken() && !(await workWaits(atOpen))) {
      atOpen = false;
      await queue.idle(WORK_POLL_MS, closing.signal);
    }
    if (closing.signal.aborted) return;
    await start();
  })().catch((err: unknown) =>
    log(`processing failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
  );
  let closed: Promise<void> | undefined;
  return {
    fetch: async (req) => app.fetch(req),
    close: () => {
      closing.abort();
      closed ??= (processing ?? Promise.resolve())
        .catch(() => {})
        .then(() => Promise.all([workers.stop(), threads?.stop()]))
        .then(() => db.close());
      return closed;
    },
    ready: start,
    preloadSearch: () => preloadSearch(ctx.embedder),
    get processingStarted() {
      return processing !== undefined;
    },
    get looksForWork() {
      return looksForWork;
    },
    models,
    database: () => databaseState(db),
    diskState: async () => (ctx.disk ? { ...(await ctx.disk.state()), setting: ctx.disk.setting } : null),
    createKey: (organization = LOCAL_ORGANIZATION) => createKey(db, organization),
    createFirstKey: async () =>
      (await countKeys(db, LOCAL_ORGANIZATION)) === 0 ? await createKey(db, LOCAL_ORGANIZATION) : null,
    dataDir: opts.dataDir,
    context: ctx,
  };
}
