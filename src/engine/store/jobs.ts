import type { Db } from "./db.js";
import { now, transaction } from "./db.js";
import { statement } from "./statements.js";

/**
 * The durable job queue: rows in `jobs`, shared by every process on the data directory. A job is
 * claimed atomically with a lease; a worker that dies stops renewing it, and once the lease has
 * expired any process claims the job again. Finished jobs are deleted; failed ones stay for a look.
 */
export interface JobRow {
  id: number;
  kind: string;
  document_id: string | null;
  namespace_id: string | null;
  payload: string;
  state: "queued" | "running" | "failed";
  attempts: number;
  max_attempts: number;
  run_after: string;
  lease_until: string | null;
  lease_owner: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  /** Set by claimJob when the job was taken over from a worker whose lease ran out (it died). */
  reclaimed?: boolean;
}

export interface NewJob {
  kind: string;
  documentId?: string | null;
  namespaceId?: string | null;
  payload?: unknown;
  maxAttempts?: number;
}

export const DEFAULT_MAX_ATTEMPTS = 3;

/** The job kind of a namespace's batched (dynamic) dreaming (memory/dreamer.ts runs it). */
export const DREAM_JOB = "dream";

const iso = (ms: number) => new Date(ms).toISOString();

export async function enqueueJob(db: Db, job: NewJob): Promise<number> {
  const t = now();
  const r = await statement<{ id: number }>(
    db,
    `INSERT INTO jobs (kind, document_id, namespace_id, payload, max_attempts, run_after, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
  ).get(
    job.kind,
    job.documentId ?? null,
    job.namespaceId ?? null,
    JSON.stringify(job.payload ?? {}),
    job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    t,
    t,
    t,
  );
  return Number(r!.id);
}

/**
 * (Re)queues the processing of a document: a job still waiting takes the new payload; one being
 * worked on is left to notice that its generation is stale, and a new job is added.
 */
export async function enqueueDocumentJob(
  db: Db,
  documentId: string,
  namespaceId: string,
  payload: unknown,
): Promise<void> {
  const t = now();
  await statement(
    db,
    "DELETE FROM jobs WHERE kind = 'document' AND document_id = $1 AND state = 'failed'",
  ).run(documentId);
  const updated = await statement(
    db,
    `UPDATE jobs SET payload = $1, attempts = 0, run_after = $2, error = NULL, updated_at = $3
       WHERE kind = 'document' AND document_id = $4 AND state = 'queued'`,
  ).run(JSON.stringify(payload), t, t, documentId);
  if (!updated.changes) await enqueueJob(db, { kind: "document", documentId, namespaceId, payload });
}

/**
 * The namespace's queued job of a kind (id, created_at), over two parameters' names: a SELECT for
 * a statement that reads it with more (document-commit.ts scheduleDreams).
 */
export const queuedJob = (kind: string, namespaceId: string) =>
  `SELECT id, created_at FROM jobs WHERE kind = ${kind} AND namespace_id = ${namespaceId} AND state = 'queued' LIMIT 1`;

/** Moves a job's earliest start to `runAfter` (an ISO time). */
export async function setJobRunAfter(db: Db, id: number, runAfter: string): Promise<void> {
  await statement(db, "UPDATE jobs SET run_after = $1, updated_at = $2 WHERE id = $3").run(
    runAfter,
    now(),
    id,
  );
}

/**
 * Claims the oldest ready job of one of `kinds` (or one whose lease expired), or undefined. A
 * queued job of one of the `onePerNamespace` kinds waits while another job of its kind and
 * namespace runs under a live lease (a namespace's dreaming reads what its last batch wrote).
 */
export async function claimJob(
  db: Db,
  kinds: readonly string[],
  owner: string,
  leaseMs: number,
  onePerNamespace: readonly string[] = [],
): Promise<JobRow | undefined> {
  const t = Date.now();
  const d = db.dialect;
  const kindList = d.list(kinds);
  // PostgreSQL: a row another transaction holds (a writer's setJobRunAfter, say) is passed over,
  // not waited for. Claims take the queue lock, not the write lock (store/db.ts TransactionLock):
  // they take turns among themselves, so the one-per-namespace check below sees every earlier
  // claim committed, but not with the replicas' index and dream commits.
  const skipLocked = d.skipLocked;
  return await transaction(
    db,
    async () => {
      const lease = `UPDATE jobs SET state = 'running', lease_owner = $1, lease_until = $2,
          attempts = attempts + 1, updated_at = $3`;
      // The first queued job, claimed by the statement that finds it (a round trip less); two
      // indexed lookups rather than one OR: the queue can hold many thousands of rows.
      const queued = await statement<JobRow>(
        db,
        `${lease} WHERE id = (SELECT id FROM jobs j WHERE state = 'queued' AND run_after <= $3
           AND ${d.isIn("kind", "$4", "text")}
           AND NOT (${d.isIn("kind", "$5", "text")} AND EXISTS (
             SELECT 1 FROM jobs r WHERE r.state = 'running' AND r.lease_until >= $3
               AND r.kind = j.kind AND r.namespace_id = j.namespace_id))
           ORDER BY id LIMIT 1${skipLocked})
         RETURNING *`,
      ).get(owner, iso(t + leaseMs), iso(t), kindList, d.list(onePerNamespace));
      if (queued) return queued;
      const expired = await statement<JobRow>(
        db,
        `${lease} WHERE id = (SELECT id FROM jobs WHERE state = 'running' AND lease_until < $3
           AND ${d.isIn("kind", "$4", "text")} ORDER BY lease_until LIMIT 1${skipLocked})
         RETURNING *`,
      ).get(owner, iso(t + leaseMs), iso(t), kindList);
      return expired && { ...expired, reclaimed: true };
    },
    "queue",
  );
}

/** Extends the lease; false when the job is no longer ours (expired and claimed elsewhere, or gone). */
export async function renewLease(db: Db, id: number, owner: string, leaseMs: number): Promise<boolean> {
  const r = await statement(
    db,
    "UPDATE jobs SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND state = 'running'",
  ).run(iso(Date.now() + leaseMs), id, owner);
  return r.changes > 0;
}

/** Gives a job back untouched (its worker is shutting down): claimable at once, the attempt not counted. */
export async function releaseJob(db: Db, id: number, owner: string): Promise<void> {
  await statement(
    db,
    `UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL, attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END,
       updated_at = $1 WHERE id = $2 AND lease_owner = $3 AND state = 'running'`,
  ).run(now(), id, owner);
}

/**
 * Puts a job back to wait `delayMs` without counting the attempt: it failed for a reason outside
 * itself (a full disk) that another attempt cannot fix sooner, and must not use up its retries.
 */
export async function deferJob(
  db: Db,
  id: number,
  owner: string,
  message: string,
  delayMs: number,
): Promise<void> {
  await statement(
    db,
    `UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL, attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END,
       error = $1, run_after = $2, updated_at = $3 WHERE id = $4 AND lease_owner = $5 AND state = 'running'`,
  ).run(message, iso(Date.now() + delayMs), now(), id, owner);
}

export async function completeJob(db: Db, id: number, owner: string): Promise<void> {
  await statement(db, "DELETE FROM jobs WHERE id = $1 AND lease_owner = $2").run(id, owner);
}

/**
 * Records a failed attempt: retried later with exponential backoff while attempts remain and the
 * error is retryable, otherwise `failed`. Returns what happened.
 */
export async function failJob(
  db: Db,
  job: JobRow,
  owner: string,
  message: string,
  retryable: boolean,
): Promise<"retry" | "failed"> {
  const retry = retryable && job.attempts < job.max_attempts;
  const backoff = Math.min(60_000, 1000 * 2 ** Math.max(0, job.attempts - 1));
  await statement(
    db,
    `UPDATE jobs SET state = $1, error = $2, run_after = $3, lease_owner = NULL, lease_until = NULL, updated_at = $4
     WHERE id = $5 AND lease_owner = $6`,
  ).run(retry ? "queued" : "failed", message, iso(Date.now() + backoff), now(), job.id, owner);
  return retry ? "retry" : "failed";
}

/** Whether any job waits or runs (in any process on the store): processing has work. */
export async function hasOpenJobs(db: Db): Promise<boolean> {
  return (
    (await statement(db, "SELECT 1 FROM jobs WHERE state IN ('queued', 'running') LIMIT 1").get()) !==
    undefined
  );
}

/** Counts of jobs per state (diagnostics, tests, bench). */
export async function jobCounts(db: Db): Promise<Record<string, number>> {
  const rows = await statement<{ state: string; n: number }>(
    db,
    "SELECT state, count(*) AS n FROM jobs GROUP BY state",
  ).all();
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

/**
 * Bytes of content still to process: the text and uploaded files of the documents whose processing
 * job is open (queued or running). The disk reserve keeps room for processing them (disk-reserve.ts).
 */
export async function unprocessedBytes(db: Db): Promise<number> {
  const row = (await statement<{ n: number }>(
    db,
    `SELECT COALESCE(SUM(length(d.content) + COALESCE(f.size, 0)), 0) AS n
       FROM jobs j JOIN documents d ON d.id = j.document_id
       LEFT JOIN document_files f ON f.document_id = j.document_id
      WHERE j.state IN ('queued', 'running') AND j.kind = 'document'`,
  ).get())!;
  return Number(row.n);
}

/**
 * Jobs a full disk stopped (deferJob's `disk full:` error) run now rather than when their wait ends:
 * the disk has room again. Returns how many.
 */
export async function resumeDiskFullJobs(db: Db): Promise<number> {
  const r = await statement(
    db,
    `UPDATE jobs SET run_after = $1 WHERE state = 'queued' AND run_after > $1 AND error LIKE 'disk full:%'`,
  ).run(now());
  return r.changes;
}
