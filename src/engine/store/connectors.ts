import type { Provider } from "../../api/index.js";
import { deleteConnectorItem } from "./connector-items.js";
import { type Db, documentTransaction, newId, now, transaction } from "./db.js";
import { deleteDocuments } from "./documents.js";
import { enqueueJob } from "./jobs.js";
import { ensureNamespace } from "./namespaces.js";
import { isSealed, openSecret, sealSecret } from "./secrets.js";
import { statement } from "./statements.js";
import { insertRun } from "./sync-runs.js";

/**
 * The rows of `connectors` (schema in store/schema.ts), and what a connector owns in other tables:
 * its documents and its queued sync jobs. Runs are in sync-runs.ts, imported items in
 * connector-items.ts.
 */

export interface ConnectorRow {
  id: string;
  organization_id: string;
  namespace_id: string;
  provider: Provider;
  state: "pending" | "connected" | "expired";
  account: string | null;
  config: string | null;
  selection: string | null;
  document_limit: number | null;
  /** Seconds between scheduled syncs; 0: none (migration 6). */
  sync_interval_seconds: number;
  credentials: string | null;
  oauth_state: string | null;
  code_verifier: string | null;
  redirect_url: string | null;
  authorization_url: string | null;
  authorization_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * `config` (API keys, personal tokens) and `credentials` (OAuth tokens) are sealed at rest
 * (store/secrets.ts); rows read here carry them opened. The row id binds each sealed value.
 */
const SECRET_COLUMNS = ["config", "credentials"] as const;
const seal = (db: Db, id: string, column: (typeof SECRET_COLUMNS)[number], value: string | null) =>
  value === null ? null : sealSecret(db, `connectors.${column}:${id}`, value);

function opened(db: Db, row: ConnectorRow | undefined): ConnectorRow | undefined {
  if (!row) return row;
  const out = { ...row };
  for (const column of SECRET_COLUMNS) {
    const value = row[column];
    if (value !== null) out[column] = openSecret(db, `connectors.${column}:${row.id}`, value);
  }
  return out;
}

/** Seals the secrets of rows written before encryption (their next write would too). */
export async function sealPlaintextSecrets(db: Db): Promise<number> {
  const rows = await statement<{ id: string; config: string | null; credentials: string | null }>(
    db,
    "SELECT id, config, credentials FROM connectors WHERE config NOT LIKE 'enc:v1:%' OR credentials NOT LIKE 'enc:v1:%'",
  ).all();
  const update = statement(db, "UPDATE connectors SET config = $1, credentials = $2 WHERE id = $3");
  for (const r of rows) {
    const keep = (column: (typeof SECRET_COLUMNS)[number]) => {
      const value = r[column];
      return value === null || isSealed(value) ? value : seal(db, r.id, column, value);
    };
    await update.run(keep("config"), keep("credentials"), r.id);
  }
  return rows.length;
}

/** A connector as it is made: its namespace and organization are the operation's. */
export type NewConnector = Omit<
  ConnectorRow,
  "id" | "created_at" | "updated_at" | "credentials" | "account" | "organization_id" | "namespace_id"
>;

/**
 * Makes a connector in a namespace (by name, made in the same transaction: nothing is made when
 * it fails) and, when it is made connected, queues its first sync run (a job of `syncJobKind`).
 */
export async function createConnector(
  db: Db,
  organizationId: string,
  namespace: string,
  connector: NewConnector,
  syncJobKind: string,
): Promise<ConnectorRow> {
  return await documentTransaction(db, null, async () => {
    const ns = await ensureNamespace(db, organizationId, namespace);
    return await documentTransaction(db, ns.id, async () => {
      const row = await insertConnector(db, {
        ...connector,
        organization_id: organizationId,
        namespace_id: ns.id,
      });
      if (row.state === "connected") await queueRun(db, row.id, syncJobKind);
      return row;
    });
  });
}

/**
 * Queues a sync run of a connector and its job (of `syncJobKind`), in one transaction: the run's
 * id, or null while another run is queued or running (nothing is queued then).
 */
export async function queueSync(db: Db, connectorId: string, syncJobKind: string): Promise<string | null> {
  return await transaction(db, () => queueRun(db, connectorId, syncJobKind));
}

/**
 * An OAuth code exchanged: the connector's tokens stored, the connector connected and its first
 * sync queued, in one transaction. Null (and nothing written) while a run is active.
 */
export async function connectConnector(
  db: Db,
  id: string,
  tokens: { account?: string | null },
  syncJobKind: string,
): Promise<string | null> {
  try {
    return await transaction(db, async () => {
      await saveCredentials(db, id, tokens);
      await markConnected(db, id);
      const run = await queueRun(db, id, syncJobKind);
      if (run === null) throw new SyncActive();
      return run;
    });
  } catch (err) {
    if (err instanceof SyncActive) return null;
    throw err;
  }
}

/** Rolls back a write that found a sync run active. */
class SyncActive extends Error {}

/**
 * Takes away what a connector's source no longer has, in one transaction: each item's document
 * (deleted as a delete does, with the memories only it was the source of) and the item.
 */
export async function dropConnectorItems(
  db: Db,
  connector: Pick<ConnectorRow, "id" | "namespace_id">,
  items: readonly { externalId: string; documentId: string | null }[],
): Promise<void> {
  if (items.length === 0) return;
  await transaction(db, async () => {
    for (const item of items) {
      if (item.documentId) await deleteDocuments(db, connector.namespace_id, [item.documentId]);
      await deleteConnectorItem(db, connector.id, item.externalId);
    }
  });
}

/** A queued run and its job, in the caller's transaction; null while another run is queued or running. */
async function queueRun(db: Db, connectorId: string, syncJobKind: string): Promise<string | null> {
  const run = await insertRun(db, connectorId);
  if (!run) return null;
  await enqueueJob(db, { kind: syncJobKind, payload: { connectorId, runId: run.id }, maxAttempts: 3 });
  return run.id;
}

async function insertConnector(
  db: Db,
  row: Omit<ConnectorRow, "id" | "created_at" | "updated_at" | "credentials" | "account">,
): Promise<ConnectorRow> {
  const t = now();
  const id = newId("con");
  await statement(
    db,
    `INSERT INTO connectors (id, organization_id, namespace_id, provider, state, config, selection, document_limit,
       sync_interval_seconds, oauth_state, code_verifier, redirect_url, authorization_url, authorization_expires_at,
       created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
  ).run(
    id,
    row.organization_id,
    row.namespace_id,
    row.provider,
    row.state,
    seal(db, id, "config", row.config),
    row.selection,
    row.document_limit,
    row.sync_interval_seconds,
    row.oauth_state,
    row.code_verifier,
    row.redirect_url,
    row.authorization_url,
    row.authorization_expires_at,
    t,
    t,
  );
  return (await getConnectorRow(db, id))!;
}

export async function getConnectorRow(db: Db, id: string): Promise<ConnectorRow | undefined> {
  return opened(db, await statement<ConnectorRow>(db, "SELECT * FROM connectors WHERE id = $1").get(id));
}

/**
 * Takes a pending connector's one-time OAuth state, in one statement: of two callbacks that carry
 * the same state, exactly one gets the row (and its code verifier); the other gets undefined.
 */
export async function consumeOAuthState(db: Db, state: string): Promise<ConnectorRow | undefined> {
  return opened(
    db,
    await statement<ConnectorRow>(
      db,
      "UPDATE connectors SET oauth_state = NULL, updated_at = $1 WHERE oauth_state = $2 AND state = 'pending' RETURNING *",
    ).get(now(), state),
  );
}

/** A pending connector whose authorization can no longer complete (expired, refused or failed). */
export async function expireConnector(db: Db, id: string): Promise<void> {
  await statement(
    db,
    "UPDATE connectors SET state = 'expired', oauth_state = NULL, code_verifier = NULL, updated_at = $1 WHERE id = $2 AND state = 'pending'",
  ).run(now(), id);
}

/** Connected connectors only: a pending OAuth connector is not listed (spec, Connector states). */
export async function listConnectorRows(
  db: Db,
  organizationId: string,
  namespaceId?: string,
): Promise<ConnectorRow[]> {
  const sql = `SELECT * FROM connectors WHERE organization_id = $1 AND state = 'connected'${namespaceId ? " AND namespace_id = $2" : ""} ORDER BY created_at`;
  const args = namespaceId ? [organizationId, namespaceId] : [organizationId];
  return (await statement<ConnectorRow>(db, sql).all(...args)).map((r) => opened(db, r)!);
}

/** OAuth tokens (sealed) and the account they belong to, when the provider names it. */
export async function saveCredentials(
  db: Db,
  id: string,
  tokens: { account?: string | null },
): Promise<void> {
  await statement(
    db,
    "UPDATE connectors SET credentials = $1, account = COALESCE($2, account), updated_at = $3 WHERE id = $4",
  ).run(seal(db, id, "credentials", JSON.stringify(tokens)), tokens.account ?? null, now(), id);
}

/** The code was exchanged: the connector is connected and its one-time OAuth values are gone. */
async function markConnected(db: Db, id: string): Promise<void> {
  await statement(
    db,
    "UPDATE connectors SET state = 'connected', oauth_state = NULL, code_verifier = NULL, authorization_url = NULL, updated_at = $1 WHERE id = $2",
  ).run(now(), id);
}

/** PATCH: a null leaves the value as it is. */
export async function updateConnectorSettings(
  db: Db,
  id: string,
  change: { selection: string | null; documentLimit: number | null; syncIntervalSeconds?: number | null },
): Promise<void> {
  await statement(
    db,
    `UPDATE connectors SET selection = COALESCE($1, selection), document_limit = COALESCE($2, document_limit),
       sync_interval_seconds = COALESCE($3, sync_interval_seconds), updated_at = $4 WHERE id = $5`,
  ).run(change.selection, change.documentLimit, change.syncIntervalSeconds ?? null, now(), id);
}

/** Whether any connector syncs on a schedule (someone must look for its due runs). */
export async function hasScheduledConnectors(db: Db): Promise<boolean> {
  return (
    (await statement(
      db,
      "SELECT 1 FROM connectors WHERE state = 'connected' AND sync_interval_seconds > 0 LIMIT 1",
    ).get()) !== undefined
  );
}

/**
 * Connected connectors whose next scheduled sync is due at `at`: none of their runs is queued or
 * running, and their last run ended (or, unfinished, was queued) at least their interval ago.
 * Read from the runs in the store, so the schedule survives restarts and is the same for every
 * process on the data directory.
 */
export async function dueConnectorIds(db: Db, at: string): Promise<string[]> {
  const rows = await statement<{ id: string }>(
    db,
    `SELECT c.id FROM connectors c
     WHERE c.state = 'connected' AND c.sync_interval_seconds > 0
       AND NOT EXISTS (SELECT 1 FROM sync_runs r WHERE r.connector_id = c.id AND r.status IN ('queued', 'running'))
       AND ${db.dialect.days(`coalesce(
             (SELECT max(coalesce(r.finished_at, r.created_at)) FROM sync_runs r WHERE r.connector_id = c.id),
             c.updated_at)`)} + c.sync_interval_seconds / 86400.0 <= ${db.dialect.days("$1")}
     ORDER BY c.id`,
  ).all(at);
  return rows.map((r) => r.id);
}

/**
 * Deletes a connector in one transaction: its imported documents too when `withDocuments` (else
 * they stay, no longer tied to it) and its queued sync job (of kind `syncJobKind`); runs and items
 * go by foreign key. A running sync notices that the connector is gone and stops. Returns the
 * number of documents deleted.
 */
export async function deleteConnector(
  db: Db,
  row: ConnectorRow,
  options: { withDocuments: boolean; syncJobKind: string },
): Promise<number> {
  return await transaction(db, async () => {
    let count = 0;
    if (options.withDocuments) {
      const ids = (
        await statement<{ id: string }>(
          db,
          "SELECT id FROM documents WHERE connector_id = $1 AND namespace_id = $2",
        ).all(row.id, row.namespace_id)
      ).map((d) => d.id);
      count = (await deleteDocuments(db, row.namespace_id, ids)).count;
    } else {
      await statement(db, "UPDATE documents SET connector_id = NULL WHERE connector_id = $1").run(row.id);
    }
    await statement(
      db,
      `DELETE FROM jobs WHERE kind = $1 AND ${db.dialect.jsonText("payload", "connectorId")} = $2 AND state = 'queued'`,
    ).run(options.syncJobKind, row.id);
    await statement(db, "DELETE FROM connectors WHERE id = $1").run(row.id);
    return count;
  });
}
