import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { FROM_SOURCE, packageUrl } from "../../package-root.js";

/**
 * What a processing thread needs to open its own engine context on the data directory. Only
 * plain values cross to a thread: its extractor, embedder and dreamer come from the environment,
 * as the engine's defaults do.
 */
export interface ThreadConfig {
  dataDir: string;
  /** The engine's PostgreSQL URL, if it runs on one: the thread opens its own connection. */
  databaseUrl?: string | undefined;
  leaseMs: number;
  diskFullRetryMs?: number | undefined;
  allowPrivateNetwork: boolean;
  secretScreening: boolean;
  /** "none" when the engine was opened without an embedder; else the environment's. */
  embedder: "env" | "none";
  /** The engine connection's write lock (store/write-lock.ts), shared, not copied. */
  writeLock: SharedArrayBuffer | undefined;
  /** Job loops in the thread (set by ProcessingThreads.start). */
  loops?: number;
}

/** Messages between the engine and its processing threads. */
export type ToThread = { type: "wake" } | { type: "stop" };
export type FromThread = { type: "log"; message: string } | { type: "wake" } | { type: "stopped" };

/** A thread that dies unexpectedly is started again after this long (a crash loop stays slow). */
const RESTART_DELAY_MS = 1_000;
/** How long a stopping thread may take to hand its jobs back before it is terminated. */
const STOP_TIMEOUT_MS = 10_000;

/**
 * Runs the engine's job loops in worker threads, one loop each, so that extraction, chunking,
 * embedding and dreaming never hold the thread that answers requests. Threads share nothing with
 * the engine but the database file (and its job table, the queue): a wake is a message.
 */
export class ProcessingThreads {
  private readonly threads = new Set<Worker>();
  private loopsPerThread = 1;
  private stopping = false;

  constructor(
    private readonly config: ThreadConfig,
    private readonly log: (message: string) => void,
  ) {}

  /**
   * Runs `loops` job loops in as many threads as the machine has cores beside the one that answers
   * requests (at least one): a third busy thread on two cores only takes turns with the other two.
   * On two cores, one thread with two loops took 1,000 bench documents to `done` in 4.8 s and
   * accepted 1,480/s, against 5.3 s and 910/s for two threads of one loop (`npm run bench -- --only
   * ingest`). A thread's loops overlap where jobs wait (a fetch, a remote model).
   */
  start(loops: number, cores = availableParallelism()): void {
    const threads = Math.max(1, Math.min(loops, cores - 1));
    this.loopsPerThread = Math.ceil(loops / threads);
    for (let i = 0; i < threads; i++) this.spawn();
  }

  /** New jobs were committed: every idle loop looks at once. */
  wake(except?: Worker): void {
    for (const t of this.threads) if (t !== except) t.postMessage({ type: "wake" } satisfies ToThread);
  }

  /** Each thread stops claiming, hands back its running jobs and exits. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.threads].map(
        (t) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => void t.terminate(), STOP_TIMEOUT_MS);
            t.once("exit", () => {
              clearTimeout(timer);
              resolve();
            });
            t.postMessage({ type: "stop" } satisfies ToThread);
          }),
      ),
    );
  }

  private spawn(): void {
    const { url, execArgv } = threadEntry("processing-thread");
    const workerData: ThreadConfig = { ...this.config, loops: this.loopsPerThread };
    const thread = new Worker(url, { workerData, execArgv });
    this.threads.add(thread);
    thread.on("message", (m: FromThread) => {
      if (m.type === "log") this.log(m.message);
      else if (m.type === "wake") this.wake(thread);
    });
    thread.on("error", (err) => this.log(`processing thread failed: ${err.stack ?? err.message}`));
    thread.on("exit", (code) => {
      this.threads.delete(thread);
      if (this.stopping) return;
      // Its jobs are claimed again once their leases run out; a new thread takes its place.
      this.log(`processing thread exited (code ${code}); starting another`);
      setTimeout(() => {
        if (!this.stopping) this.spawn();
      }, RESTART_DELAY_MS).unref();
    });
  }
}

/**
 * A thread's entry file (`name`, a path under src/engine/ without its extension): the compiled .js
 * in dist/ (also for the bundled command, whose own code sits elsewhere), or, when memctx runs from
 * its TypeScript sources (tests, tsx), the .ts with tsx's loader.
 */
export function threadEntry(name: string): { url: URL; execArgv: string[] } {
  return FROM_SOURCE
    ? { url: packageUrl(`src/engine/${name}.ts`), execArgv: ["--import", "tsx"] }
    : { url: packageUrl(`dist/engine/${name}.js`), execArgv: [] };
}
