import { type Db, now } from "./db.js";
import { statement } from "./statements.js";

/**
 * The rows of `connector_items`: what a connector imported from its source (external id, the
 * source's version, the document it became), so a sync skips the unchanged and deletes the vanished.
 */

export interface ConnectorItemRow {
  external_id: string;
  document_id: string | null;
  version: string;
}

export async function connectorItems(db: Db, connectorId: string): Promise<ConnectorItemRow[]> {
  return await statement<ConnectorItemRow>(
    db,
    "SELECT external_id, document_id, version FROM connector_items WHERE connector_id = $1",
  ).all(connectorId);
}

export async function upsertConnectorItem(
  db: Db,
  connectorId: string,
  externalId: string,
  documentId: string,
  version: string,
): Promise<void> {
  await statement(
    db,
    `INSERT INTO connector_items (connector_id, external_id, document_id, version, updated_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT(connector_id, external_id) DO UPDATE SET document_id = excluded.document_id, version = excluded.version,
       updated_at = excluded.updated_at`,
  ).run(connectorId, externalId, documentId, version, now());
}

export async function deleteConnectorItem(db: Db, connectorId: string, externalId: string): Promise<void> {
  await statement(db, "DELETE FROM connector_items WHERE connector_id = $1 AND external_id = $2").run(
    connectorId,
    externalId,
  );
}
