import { hostname } from "node:os";
import { setTimeout as sleep, setImmediate as yieldToEventLoop } from "node:timers/promises";
import { type Db, isDiskFull } from "../store/db.js";
import { type FailureMark, failJobWithMark } from "../store/job-failures.js";
import {
  claimJob,
  completeJob,
  deferJob,
  type JobRow,
  releaseJob,
  renewLease,
  resumeDiskFullJobs,
} from "../store/jobs.js";
import type { JobQueue } from "./queue.js";

/** Thrown by a handler for an error that another attempt cannot fix (bad input, refused URL). */
export class PermanentJobError extends Error {
  override name = "PermanentJobError";
}

/** Handles one claimed job. Throwing fails the attempt (retried unless PermanentJobError). */
export type JobHandler = (job: JobRow, signal: AbortSignal) => Promise<void>;
/**
 * What a job of a kind leaves where readers look once it fails for good (store/job-failures.ts),
 * written with the failure; a handler may also say so in the log (`marked`: the rows it changed).
 */
export interface JobFailureHandler {
  mark(job: JobRow): FailureMark | undefined;
  log?(job: JobRow, message: string, marked: number): void;
}

export interface WorkerPoolOptions {
  db: Db;
  queue: JobQueue;
  workers: number;
  /** A job is claimed again this long after its worker stopped renewing it. */
  leaseMs: number;
  /** How often an idle worker looks for jobs written by other processes. */
  pollMs?: number;
  /** A job that failed on a full disk waits this long, then runs again (the attempt not counted). */
  diskFullRetryMs?: number;
  /**
   * Whether the store's disk has room to work again (disk-reserve.ts hasRoom): after a full disk
   * the loops claim nothing until it has, then run the jobs it stopped at once, rather than each
   * when its wait ends. Without it (PostgreSQL's disk is its server's), jobs wait diskFullRetryMs.
   */
  room?: () => Promise<boolean>;
  log: (message: string) => void;
}

export const DEFAULT_DISK_FULL_RETRY_MS = 30_000;
/** How often loops stopped by a full disk look for room again. */
const ROOM_POLL_MS = 1_000;

interface Registration {
  handle: JobHandler;
  onFailed?: JobFailureHandler | undefined;
}

export interface JobKindOptions {
  /**
   * A job of this kind does not start while another of its namespace runs, in any thread or
   * process: each sees what the one before it wrote.
   */
  onePerNamespace?: boolean;
}

/**
 * Background loops that claim jobs from the shared table and run them. Each job runs under a
 * lease renewed while it works; between jobs the loop yields to the event loop.
 */
export class WorkerPool {
  private readonly handlers = new Map<string, Registration>();
  private readonly onePerNamespace: string[] = [];
  private readonly abort = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly periodic: { everyMs: number; task: () => Promise<unknown> | undefined }[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private started = false;
  /** A write of this pool found the disk full: its loops wait for room (WorkerPoolOptions.room). */
  private diskFull = false;
  readonly owner = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;

  constructor(private readonly o: WorkerPoolOptions) {}

  register(kind: string, handle: JobHandler, onFailed?: JobFailureHandler, opts: JobKindOptions = {}): void {
    this.handlers.set(kind, { handle, onFailed });
    if (opts.onePerNamespace) this.onePerNamespace.push(kind);
  }

  /**
   * A task this pool runs every `everyMs` (and once as it starts) while its loops run: work that
   * comes from time rather than from a queued job (connectors' scheduled syncs). A pool without
   * loops runs none: the processes that process also keep time. A task must be safe to run in
   * several processes at once.
   */
  every(everyMs: number, task: () => Promise<unknown> | undefined): void {
    this.periodic.push({ everyMs, task });
    if (this.started) this.schedule({ everyMs, task });
  }

  start(): void {
    this.started = this.o.workers > 0;
    for (let i = 0; i < this.o.workers; i++) this.loops.push(this.loop());
    if (this.started) for (const p of this.periodic) this.schedule(p);
  }

  private schedule(p: { everyMs: number; task: () => Promise<unknown> | undefined }): void {
    const run = () => {
      if (this.abort.signal.aborted) return;
      // A busy database, say: the next tick tries again.
      Promise.resolve()
        .then(p.task)
        .catch((err: unknown) =>
          this.o.log(`periodic task failed: ${err instanceof Error ? err.message : String(err)}`),
        );
    };
    this.timers.push(setTimeout(run, 0), setInterval(run, p.everyMs));
  }

  /** Stops claiming, aborts running jobs and waits for the loops; their jobs are claimed again later. */
  async stop(): Promise<void> {
    for (const t of this.timers.splice(0)) clearTimeout(t);
    this.abort.abort();
    this.o.queue.wake();
    await Promise.allSettled(this.loops);
  }

  private async loop(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      if (this.diskFull && this.o.room) {
        // At most once a poll, new jobs or not: free space is no promise that the next write fits.
        await sleep(ROOM_POLL_MS, undefined, { signal }).catch(() => {});
        if (signal.aborted || !(await this.o.room().catch(() => false))) continue;
        this.diskFull = false;
        const resumed = await resumeDiskFullJobs(this.o.db).catch(() => 0);
        if (resumed > 0) this.o.log(`the disk has room again: ${resumed} job(s) it stopped run now`);
      }
      let job: JobRow | undefined;
      try {
        job = await claimJob(
          this.o.db,
          [...this.handlers.keys()],
          this.owner,
          this.o.leaseMs,
          this.onePerNamespace,
        );
      } catch (err) {
        // SQLITE_BUSY beyond the busy timeout, for example: try again shortly.
        this.o.log(`job claim failed: ${err instanceof Error ? err.message : String(err)}`);
        if (isDiskFull(err)) this.diskFull = true;
      }
      if (!job) {
        await this.o.queue.idle(this.o.pollMs ?? 500, signal);
        continue;
      }
      try {
        await this.run(job, signal);
      } catch (err) {
        // Bookkeeping failed (a busy database beyond its timeout): the lease runs out and the job is
        // claimed again; this loop goes on.
        this.o.log(`job ${job.id} (${job.kind}): ${err instanceof Error ? err.message : String(err)}`);
      }
      await yieldToEventLoop();
    }
  }

  private async run(job: JobRow, signal: AbortSignal): Promise<void> {
    const reg = this.handlers.get(job.kind)!;
    // Claimed again after its lease ran out on every attempt: its worker died each time (a crash,
    // an OOM kill). Running it again would only kill this process too.
    if (job.reclaimed && job.attempts > job.max_attempts) {
      const message = `gave up after ${job.max_attempts} attempts: the process working on it stopped each time`;
      await this.fail(job, reg, message, false);
      return;
    }
    const jobAbort = new AbortController();
    const onStop = () => jobAbort.abort();
    signal.addEventListener("abort", onStop, { once: true });
    const renew = setInterval(
      async () => {
        try {
          if (!(await renewLease(this.o.db, job.id, this.owner, this.o.leaseMs))) jobAbort.abort();
        } catch {
          // a busy database: the next renewal tries again, well within the lease
        }
      },
      Math.max(50, Math.floor(this.o.leaseMs / 3)),
    );
    try {
      await reg.handle(job, jobAbort.signal);
      await completeJob(this.o.db, job.id, this.owner);
    } catch (err) {
      // Shutting down: give the job back for the next start. Lost the lease: it is someone else's.
      if (signal.aborted) return await releaseJob(this.o.db, job.id, this.owner);
      if (jobAbort.signal.aborted) return;
      const message = err instanceof Error ? err.message : String(err);
      if (isDiskFull(err)) {
        // Not the job's fault: it waits for space without using up its attempts. If even this
        // write fails, the lease runs out and the job is claimed again once writes succeed.
        this.diskFull = true;
        const wait = this.o.diskFullRetryMs ?? DEFAULT_DISK_FULL_RETRY_MS;
        await deferJob(this.o.db, job.id, this.owner, `disk full: ${message}`, wait);
        this.o.log(`job ${job.id} (${job.kind}) stopped on a full disk; trying again in ${wait} ms`);
        return;
      }
      const outcome = await this.fail(job, reg, message, !(err instanceof PermanentJobError));
      if (outcome === "retry" && !(err instanceof Error && err.name === "FetchFailedError")) {
        this.o.log(`job ${job.id} (${job.kind}) attempt ${job.attempts} failed, will retry: ${message}`);
      }
    } finally {
      clearInterval(renew);
      signal.removeEventListener("abort", onStop);
    }
  }

  /**
   * Records a failed attempt, and a final failure where readers look, in one store operation
   * (store/job-failures.ts failJobWithMark).
   */
  private async fail(
    job: JobRow,
    reg: Registration,
    message: string,
    retryable: boolean,
  ): Promise<"retry" | "failed"> {
    const { outcome, marked } = await failJobWithMark(
      this.o.db,
      job,
      this.owner,
      message,
      retryable,
      reg.onFailed?.mark(job),
    );
    if (outcome === "failed") {
      this.o.log(`job ${job.id} (${job.kind}) failed: ${message}`);
      reg.onFailed?.log?.(job, message, marked);
    }
    return outcome;
  }
}
