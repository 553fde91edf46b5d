import type { SyncRun } from "../../api/index.js";
import { type Db, newId, now, parseJson } from "./db.js";
import { statement } from "./statements.js";

/** The rows of `sync_runs`: one per sync of a connector (schema in store/schema.ts). */

export interface SyncRunRow {
  id: string;
  connector_id: string;
  status: "queued" | "running" | "done" | "failed";
  error: string | null;
  counts: string | null;
  failed_items: string | null;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
}

export type SyncCounts = {
  added: number;
  updated: number;
  unchanged: number;
  deleted: number;
  skipped: number;
  failed: number;
};

export const emptyCounts = (): SyncCounts => ({
  added: 0,
  updated: 0,
  unchanged: 0,
  deleted: 0,
  skipped: 0,
  failed: 0,
});

/** Runs shown with a connector's `include=syncs`. */
export const RECENT_RUNS = 10;

/**
 * A queued run, or undefined while another run of the connector is queued or running (a unique
 * index allows one: two triggers at once cannot both queue).
 */
export async function insertRun(db: Db, connectorId: string): Promise<SyncRunRow | undefined> {
  const id = newId("run");
  // DO NOTHING, not a caught error: inside a PostgreSQL transaction a unique violation would end it.
  const inserted = await statement(
    db,
    "INSERT INTO sync_runs (id, connector_id, status, created_at) VALUES ($1, $2, 'queued', $3) ON CONFLICT DO NOTHING",
  ).run(id, connectorId, now());
  if (inserted.changes === 0) return undefined;
  return (await getRun(db, id))!;
}

export async function getRun(db: Db, id: string): Promise<SyncRunRow | undefined> {
  return await statement<SyncRunRow>(db, "SELECT * FROM sync_runs WHERE id = $1").get(id);
}

export async function recentRuns(db: Db, connectorId: string, limit: number): Promise<SyncRunRow[]> {
  return await statement<SyncRunRow>(
    db,
    "SELECT * FROM sync_runs WHERE connector_id = $1 ORDER BY created_at DESC, rowid DESC LIMIT $2",
  ).all(connectorId, limit);
}

/** The run is running; a resumed run keeps its first start time. */
export async function startRun(db: Db, id: string): Promise<void> {
  await statement(
    db,
    "UPDATE sync_runs SET status = 'running', started_at = COALESCE(started_at, $1) WHERE id = $2",
  ).run(now(), id);
}

export async function finishRun(
  db: Db,
  id: string,
  outcome: {
    status: "done" | "failed";
    error?: string | null;
    counts: SyncCounts;
    failedItems: { item: string; reason: string }[];
  },
): Promise<void> {
  await statement(
    db,
    "UPDATE sync_runs SET status = $1, error = $2, counts = $3, failed_items = $4, finished_at = $5 WHERE id = $6",
  ).run(
    outcome.status,
    outcome.error ?? null,
    JSON.stringify(outcome.counts),
    JSON.stringify(outcome.failedItems),
    now(),
    id,
  );
}

export function toSyncRun(run: SyncRunRow): SyncRun {
  return {
    id: run.id,
    error: run.error,
    system: {
      status: run.status,
      startedAt: run.started_at,
      finishedAt: run.finished_at,
      createdAt: run.created_at,
    },
    counts: parseJson<SyncCounts>(run.counts, emptyCounts()),
    failedItems: parseJson<{ item: string; reason: string }[]>(run.failed_items, []),
  };
}
