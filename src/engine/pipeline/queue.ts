import type { Db } from "../store/db.js";
import { enqueueJob, type NewJob } from "../store/jobs.js";

/**
 * The engine's handle on the job table: enqueue, and wake this process's idle workers at once
 * (workers of other processes notice new jobs on their next poll).
 */
export class JobQueue {
  private readonly waiters = new Set<() => void>();

  constructor(readonly db: Db) {}

  enqueue(job: NewJob): number {
    const id = enqueueJob(this.db, job);
    this.wake();
    return id;
  }

  /** Call after committing jobs written by other store functions (e.g. addDocument). */
  wake(): void {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }

  /** Resolves on wake() or after `ms`, whichever comes first. */
  idle(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      this.waiters.add(done);
    });
  }
}
