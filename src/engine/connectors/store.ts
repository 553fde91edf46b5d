import type { Connector, Provider, SyncRun } from "../../api/index.js";
import { type Db, newId, now, parseJson } from "../store/db.js";
import { isSealed, openSecret, sealSecret } from "../store/secrets.js";
import { redactConfig } from "./config.js";
import type { OAuthTokens } from "./types.js";

/** The rows of `connectors`, `sync_runs` and `connector_items` (schema in store/schema.ts). */

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
  credentials: string | null;
  oauth_state: string | null;
  code_verifier: string | null;
  redirect_url: string | null;
  authorization_url: string | null;
  authorization_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

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
export function sealPlaintextSecrets(db: Db): number {
  const rows = db
    .prepare(
      "SELECT id, config, credentials FROM connectors WHERE config NOT LIKE 'enc:v1:%' OR credentials NOT LIKE 'enc:v1:%'",
    )
    .all() as { id: string; config: string | null; credentials: string | null }[];
  const update = db.prepare("UPDATE connectors SET config = ?, credentials = ? WHERE id = ?");
  for (const r of rows) {
    const keep = (column: (typeof SECRET_COLUMNS)[number]) => {
      const value = r[column];
      return value === null || isSealed(value) ? value : seal(db, r.id, column, value);
    };
    update.run(keep("config"), keep("credentials"), r.id);
  }
  return rows.length;
}

export function insertConnector(
  db: Db,
  row: Omit<ConnectorRow, "id" | "created_at" | "updated_at" | "credentials" | "account">,
): ConnectorRow {
  const t = now();
  const id = newId("con");
  db.prepare(
    `INSERT INTO connectors (id, organization_id, namespace_id, provider, state, config, selection, document_limit,
       oauth_state, code_verifier, redirect_url, authorization_url, authorization_expires_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    row.organization_id,
    row.namespace_id,
    row.provider,
    row.state,
    seal(db, id, "config", row.config),
    row.selection,
    row.document_limit,
    row.oauth_state,
    row.code_verifier,
    row.redirect_url,
    row.authorization_url,
    row.authorization_expires_at,
    t,
    t,
  );
  return getConnectorRow(db, id)!;
}

export function getConnectorRow(db: Db, id: string): ConnectorRow | undefined {
  return opened(db, db.prepare("SELECT * FROM connectors WHERE id = ?").get(id) as ConnectorRow | undefined);
}

/**
 * Takes a pending connector's one-time OAuth state, in one statement: of two callbacks that carry
 * the same state, exactly one gets the row (and its code verifier); the other gets undefined.
 */
export function consumeOAuthState(db: Db, state: string): ConnectorRow | undefined {
  return opened(
    db,
    db
      .prepare(
        "UPDATE connectors SET oauth_state = NULL, updated_at = ? WHERE oauth_state = ? AND state = 'pending' RETURNING *",
      )
      .get(now(), state) as ConnectorRow | undefined,
  );
}

/** A pending connector whose authorization can no longer complete (expired, refused or failed). */
export function expireConnector(db: Db, id: string): void {
  db.prepare(
    "UPDATE connectors SET state = 'expired', oauth_state = NULL, code_verifier = NULL, updated_at = ? WHERE id = ? AND state = 'pending'",
  ).run(now(), id);
}

/** Connected connectors only: a pending OAuth connector is not listed (spec, Connector states). */
export function listConnectorRows(db: Db, organizationId: string, namespaceId?: string): ConnectorRow[] {
  const sql = `SELECT * FROM connectors WHERE organization_id = ? AND state = 'connected'${namespaceId ? " AND namespace_id = ?" : ""} ORDER BY created_at`;
  const args = namespaceId ? [organizationId, namespaceId] : [organizationId];
  return (db.prepare(sql).all(...args) as unknown as ConnectorRow[]).map((r) => opened(db, r)!);
}

export function saveCredentials(db: Db, id: string, tokens: OAuthTokens): void {
  db.prepare(
    "UPDATE connectors SET credentials = ?, account = COALESCE(?, account), updated_at = ? WHERE id = ?",
  ).run(seal(db, id, "credentials", JSON.stringify(tokens)), tokens.account ?? null, now(), id);
}

export function insertRun(db: Db, connectorId: string): SyncRunRow {
  const id = newId("run");
  db.prepare("INSERT INTO sync_runs (id, connector_id, status, created_at) VALUES (?, ?, 'queued', ?)").run(
    id,
    connectorId,
    now(),
  );
  return getRun(db, id)!;
}

export function getRun(db: Db, id: string): SyncRunRow | undefined {
  return db.prepare("SELECT * FROM sync_runs WHERE id = ?").get(id) as SyncRunRow | undefined;
}

export function recentRuns(db: Db, connectorId: string, limit: number): SyncRunRow[] {
  return db
    .prepare("SELECT * FROM sync_runs WHERE connector_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?")
    .all(connectorId, limit) as unknown as SyncRunRow[];
}

export function finishRun(
  db: Db,
  id: string,
  outcome: {
    status: "done" | "failed";
    error?: string | null;
    counts: SyncCounts;
    failedItems: { item: string; reason: string }[];
  },
): void {
  db.prepare(
    "UPDATE sync_runs SET status = ?, error = ?, counts = ?, failed_items = ?, finished_at = ? WHERE id = ?",
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

export function toConnector(
  db: Db,
  row: ConnectorRow,
  namespace: string,
  include: { syncs?: boolean; picker?: boolean } = {},
): Connector {
  const [latest] = recentRuns(db, row.id, 1);
  return {
    id: row.id,
    provider: row.provider,
    namespace,
    account: row.account,
    config: redactConfig(parseJson<Record<string, unknown> | null>(row.config, null)),
    selection: parseJson<Record<string, unknown> | null>(row.selection, null),
    documentLimit: row.document_limit,
    latestRun: latest ? toSyncRun(latest) : null,
    authorization: null,
    ...(include.syncs ? { syncs: recentRuns(db, row.id, RECENT_RUNS).map(toSyncRun) } : {}),
    // The embedded engine hosts no picker: what a connector syncs is changed with PATCH selection.
    ...(include.picker ? { picker: null } : {}),
    system: { createdAt: row.created_at, updatedAt: row.updated_at },
  };
}

export const RECENT_RUNS = 10;

export interface ConnectorItemRow {
  external_id: string;
  document_id: string | null;
  version: string;
}

export function connectorItems(db: Db, connectorId: string): ConnectorItemRow[] {
  return db
    .prepare("SELECT external_id, document_id, version FROM connector_items WHERE connector_id = ?")
    .all(connectorId) as unknown as ConnectorItemRow[];
}

export function upsertConnectorItem(
  db: Db,
  connectorId: string,
  externalId: string,
  documentId: string,
  version: string,
): void {
  db.prepare(
    `INSERT INTO connector_items (connector_id, external_id, document_id, version, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(connector_id, external_id) DO UPDATE SET document_id = excluded.document_id, version = excluded.version,
       updated_at = excluded.updated_at`,
  ).run(connectorId, externalId, documentId, version, now());
}

export function deleteConnectorItem(db: Db, connectorId: string, externalId: string): void {
  db.prepare("DELETE FROM connector_items WHERE connector_id = ? AND external_id = ?").run(
    connectorId,
    externalId,
  );
}
