import type { Db } from "../store/db.js";
import { enqueueJob, type NewJob } from "../store/jobs.js";

/**
 * The engine's handle on the job table: enqueue, and wake this process's idle workers at once
 * (workers of other processes notice new jobs on their next poll).
 */
export class JobQueue {
  private readonly waiters = new Set<(woken: boolean) => void>();
  /** How many times wake() was called: a caller that was busy meanwhile still sees it. */
  wakes = 0;

  /** `onWake` also tells the workers of other threads (see threads.ts). */
  constructor(
    readonly db: Db,
    private readonly onWake?: () => void,
  ) {}

  async enqueue(job: NewJob): Promise<number> {
    const id = await enqueueJob(this.db, job);
    this.wake();
    return id;
  }

  /**
   * Call after committing jobs written by other store functions (e.g. addDocument). `tellOthers`
   * false: the wake came from another thread, which told the rest itself.
   */
  wake(tellOthers = true): void {
    this.wakes++;
    for (const w of this.waiters) w(true);
    this.waiters.clear();
    if (tellOthers) this.onWake?.();
  }

  /** Resolves on wake() (true) or after `ms` (false), whichever comes first. */
  idle(ms: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (woken = false) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", aborted);
        this.waiters.delete(done);
        resolve(woken);
      };
      const aborted = () => done();
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", aborted, { once: true });
      this.waiters.add(done);
    });
  }
}
