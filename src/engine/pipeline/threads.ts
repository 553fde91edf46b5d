import { Worker } from "node:worker_threads";

/**
 * What a processing thread needs to open its own engine context on the data directory. Only
 * plain values cross to a thread: its extractor, embedder and dreamer come from the environment,
 * as the engine's defaults do.
 */
export interface ThreadConfig {
  dataDir: string;
  leaseMs: number;
  diskFullRetryMs?: number | undefined;
  allowPrivateNetwork: boolean;
  /** "none" when the engine was opened without an embedder; else the environment's. */
  embedder: "env" | "none";
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
  private stopping = false;

  constructor(
    private readonly config: ThreadConfig,
    private readonly log: (message: string) => void,
  ) {}

  start(count: number): void {
    for (let i = 0; i < count; i++) this.spawn();
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
    const { url, execArgv } = threadEntry();
    const thread = new Worker(url, { workerData: this.config, execArgv });
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
 * The thread's entry file: the compiled thread.js beside this one, or, when memctx runs from its
 * TypeScript sources (tests, tsx), thread.ts with tsx's loader.
 */
function threadEntry(): { url: URL; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith(".ts");
  return fromSource
    ? { url: new URL("./thread.ts", import.meta.url), execArgv: ["--import", "tsx"] }
    : { url: new URL("./thread.js", import.meta.url), execArgv: [] };
}
