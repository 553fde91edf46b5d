import type { NamespaceRecord, NamespaceSummary } from "../../api/namespaces.js";
import { Params } from "./connection.js";
import { type Db, documentTransaction, newId, now } from "./db.js";
import { currentMemory, expiredMemory } from "./memories.js";
import { statement } from "./statements.js";

export interface NamespaceRow {
  id: string;
  organization_id: string;
  name: string;
  supporting_context: string | null;
  /** Kept by triggers (schema step 2). */
  document_count: number;
  /** Current memories (memories.ts currentMemory), kept by triggers; those past forget_after are still in it. */
  memory_count: number;
  /** Secret screening of what is added: 1 on, 0 off, null the deployment's setting (migration 13). */
  secret_screening: number | null;
  created_at: string;
  updated_at: string;
}

export async function findNamespace(
  db: Db,
  organizationId: string,
  name: string,
): Promise<NamespaceRow | undefined> {
  return await statement<NamespaceRow>(
    db,
    "SELECT * FROM namespaces WHERE organization_id = $1 AND name = $2",
  ).get(organizationId, name);
}

export async function getNamespace(db: Db, id: string): Promise<NamespaceRow | undefined> {
  return await statement<NamespaceRow>(db, "SELECT * FROM namespaces WHERE id = $1").get(id);
}

/** Namespaces come into being on their first write. */
export async function ensureNamespace(db: Db, organizationId: string, name: string): Promise<NamespaceRow> {
  const existing = await findNamespace(db, organizationId, name);
  if (existing) return existing;
  const t = now();
  await statement(
    db,
    `INSERT INTO namespaces (id, organization_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT(organization_id, name) DO NOTHING`,
  ).run(newId("ns"), organizationId, name, t, t);
  return (await findNamespace(db, organizationId, name))!;
}

/**
 * The namespace's counts from its maintained counters: no scan of its documents or memories. The
 * memory counter counts current memories (memories.ts currentMemory); those of them expired by now
 * leave the count when read (the live rule), through the partial index memories_live_forget_after.
 */
const counts = async (db: Db, row: NamespaceRow) => {
  const expired = (await statement<{ n: number }>(
    db,
    `SELECT count(*) AS n FROM memories m
       WHERE m.namespace_id = $1 AND ${currentMemory("m")} AND ${expiredMemory("m", "$2")}`,
  ).get(row.id, new Date().toISOString()))!;
  return { documentCount: row.document_count, memoryCount: row.memory_count - expired.n };
};

/**
 * A namespace's documents still being processed: not indexed yet, and without their memories yet
 * (those not indexed included). Each count reads its own partial index (migration 13), so it
 * costs the pending documents, not the namespace's.
 */
export async function processingCounts(
  db: Db,
  namespaceId: string,
): Promise<{ documents: number; dreaming: number }> {
  const documents = (await statement<{ n: number }>(
    db,
    "SELECT count(*) AS n FROM documents WHERE namespace_id = $1 AND status NOT IN ('done', 'failed')",
  ).get(namespaceId))!;
  const dreaming = (await statement<{ n: number }>(
    db,
    "SELECT count(*) AS n FROM documents WHERE namespace_id = $1 AND dreaming_status = 'dreaming' AND status <> 'failed'",
  ).get(namespaceId))!;
  return { documents: documents.n, dreaming: dreaming.n };
}

/** The namespace's record; `screensSecrets` is the deployment's setting, which the namespace's own wins over. */
export async function toNamespaceRecord(
  db: Db,
  row: NamespaceRow,
  screensSecrets: boolean,
): Promise<NamespaceRecord> {
  return {
    namespace: row.name,
    supportingContext: row.supporting_context,
    ...(await counts(db, row)),
    processing: await processingCounts(db, row.id),
    secretScreening: row.secret_screening === null ? screensSecrets : row.secret_screening === 1,
    system: { createdAt: row.created_at, updatedAt: row.updated_at },
  };
}

/** The namespace's supporting context and its organization's context (what an extractor reads). */
export async function namespaceContexts(
  db: Db,
  namespaceId: string,
): Promise<{ supportingContext: string | null; organizationalContext: string | null } | undefined> {
  const row = await statement<{ ns_context: string | null; org_context: string | null }>(
    db,
    `SELECT n.supporting_context AS ns_context, o.organizational_context AS org_context
     FROM namespaces n JOIN organizations o ON o.id = n.organization_id WHERE n.id = $1`,
  ).get(namespaceId);
  return row && { supportingContext: row.ns_context, organizationalContext: row.org_context };
}

/** A page of the organization's namespaces (by name), restricted to `allowed` when given. */
export async function listNamespaces(
  db: Db,
  organizationId: string,
  page: number,
  limit: number,
  allowed: string[] | null,
): Promise<{ namespaces: NamespaceSummary[]; total: number }> {
  const p = new Params(db.dialect, organizationId);
  const filter = allowed ? `AND ${p.isIn("name", allowed, "text")}` : "";
  const total = (await statement<{ n: number }>(
    db,
    `SELECT count(*) AS n FROM namespaces WHERE organization_id = $1 ${filter}`,
  ).get(...p.values))!.n;
  const rows = await statement<NamespaceRow>(
    db,
    `SELECT * FROM namespaces WHERE organization_id = $1 ${filter} ORDER BY name
     LIMIT ${p.add(limit)} OFFSET ${p.add((page - 1) * limit)}`,
  ).all(...p.values);
  const namespaces: NamespaceSummary[] = [];
  for (const r of rows) {
    namespaces.push({
      id: r.id,
      namespace: r.name,
      ...(await counts(db, r)),
      description: r.supporting_context,
      system: { createdAt: r.created_at, updatedAt: r.updated_at },
    });
  }
  return { namespaces, total };
}

/** A namespace's settings, each changed only when given (null clears it). */
export interface NamespaceSettings {
  supportingContext?: string | null | undefined;
  /** null: the deployment's setting. */
  secretScreening?: boolean | null | undefined;
}

/**
 * Sets (or, with null, clears) the namespace's settings that are given, making the namespace (by
 * name) in the same transaction, which locks only the namespace's own row.
 */
export async function setNamespaceSettings(
  db: Db,
  organizationId: string,
  name: string,
  settings: NamespaceSettings,
): Promise<NamespaceRow> {
  return await documentTransaction(db, null, async () => {
    const ns = await ensureNamespace(db, organizationId, name);
    const t = now();
    if (settings.supportingContext !== undefined) {
      await statement(db, "UPDATE namespaces SET supporting_context = $1, updated_at = $2 WHERE id = $3").run(
        settings.supportingContext,
        t,
        ns.id,
      );
    }
    if (settings.secretScreening !== undefined) {
      const flag = settings.secretScreening === null ? null : settings.secretScreening ? 1 : 0;
      await statement(db, "UPDATE namespaces SET secret_screening = $1, updated_at = $2 WHERE id = $3").run(
        flag,
        t,
        ns.id,
      );
    }
    return (await getNamespace(db, ns.id))!;
  });
}

/**
 * The target's documents that a move of `fromId`'s content into it replaces: those with a caller
 * id that the moved namespace also has.
 */
export async function documentsReplacedByMove(db: Db, fromId: string, toId: string): Promise<string[]> {
  const rows = await statement<{ id: string }>(
    db,
    `SELECT id FROM documents WHERE namespace_id = $1 AND custom_id IN
         (SELECT custom_id FROM documents WHERE namespace_id = $2 AND custom_id IS NOT NULL)`,
  ).all(toId, fromId);
  return rows.map((d) => d.id);
}

/** Rows a move changes per statement: each statement stays short, all in the caller's transaction. */
const MOVE_BATCH_ROWS = 2_000;

/**
 * Moves a namespace's documents, chunks, memories, jobs, connectors and buckets into another one,
 * MOVE_BATCH_ROWS rows a statement; a bucket the target has already (by name) stays the target's.
 * The source's search index goes first, whole: a row moved out of a live index left it row by row
 * (PostgreSQL's triggers updating the space's and each term's totals, the same rows again and
 * again), and a namespace of 17,000 chunks ran past the statement timeout in one statement, and
 * in batches grew slower with each. Each moved row is queued for the target's index, which the
 * commit brings up to date (search-index.ts indexPending, in passes).
 */
export async function moveNamespaceContents(db: Db, fromId: string, toId: string): Promise<void> {
  await statement(db, "DELETE FROM search_spaces WHERE namespace_id = $1").run(fromId);
  for (const table of ["documents", "chunks", "memories", "jobs", "connectors"]) {
    const key = table === "jobs" || table === "connectors" ? "id" : "rowid";
    const batch = statement(
      db,
      `UPDATE ${table} SET namespace_id = $1 WHERE ${key} IN
         (SELECT ${key} FROM ${table} WHERE namespace_id = $2 LIMIT ${MOVE_BATCH_ROWS})`,
    );
    while ((await batch.run(toId, fromId)).changes > 0);
  }
  await statement(
    db,
    `UPDATE profile_buckets SET namespace_id = $1 WHERE namespace_id = $2
       AND name NOT IN (SELECT name FROM profile_buckets WHERE namespace_id = $1)`,
  ).run(toId, fromId);
  await statement(db, "UPDATE namespaces SET updated_at = $1 WHERE id = $2").run(now(), toId);
}

/**
 * Deletes a namespace and everything still in it (foreign keys cascade to documents, chunks,
 * vectors, memories, buckets, connectors and jobs).
 */
export async function dropNamespace(db: Db, id: string): Promise<void> {
  await statement(db, "DELETE FROM namespaces WHERE id = $1").run(id);
  // Raised by the memories the delete took with it; no foreign key takes it (schema step 13).
  await statement(db, "DELETE FROM memory_versions WHERE namespace_id = $1").run(id);
}

/**
 * The organization's existing namespaces among `names`, or all of them (`null`): for legacy
 * routes, which name no namespace in the path and may span several.
 */
export async function namespacesNamed(
  db: Db,
  organizationId: string,
  names: readonly string[] | null,
): Promise<NamespaceRow[]> {
  if (names === null) {
    return await statement<NamespaceRow>(
      db,
      "SELECT * FROM namespaces WHERE organization_id = $1 ORDER BY name",
    ).all(organizationId);
  }
  return await statement<NamespaceRow>(
    db,
    `SELECT * FROM namespaces WHERE organization_id = $1
     AND ${db.dialect.isIn("name", "$2", "text")} ORDER BY name`,
  ).all(organizationId, db.dialect.list(names));
}

/**
 * The document tokens an organization holds: the sum of its namespaces' counters (kept by
 * triggers, migration 6), so that a quota check reads one row per namespace, never the documents.
 */
export async function organizationDocumentTokens(db: Db, organizationId: string): Promise<number> {
  // PostgreSQL updates the counters at the commit (its migration 5): fire what this transaction wrote.
  if (db.dialect.name === "postgres" && db.isTransaction) await db.exec("SET CONSTRAINTS ALL IMMEDIATE");
  const row = (await statement<{ n: number }>(
    db,
    "SELECT coalesce(sum(document_tokens), 0) AS n FROM namespaces WHERE organization_id = $1",
  ).get(organizationId))!;
  return row.n;
}
