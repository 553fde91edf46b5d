import type { Filter } from "../../api/filter.js";
import { Params } from "./connection.js";
import { type Db, documentTransaction, now, transaction } from "./db.js";
import { compileFilter, type FilterForm, filterFormFor } from "./filter.js";
import { liveMemory, type SubjectKind } from "./memories.js";
import { ensureNamespace } from "./namespaces.js";
import { memoriesHolding } from "./search-index.js";
import { MEMORY_FILTER_TARGET } from "./search-scope.js";
import { statement } from "./statements.js";

/**
 * Profile bucket definitions. Organization-owned buckets (namespace_id NULL; every organization
 * starts with `preferences`) appear in every namespace's effective map and cannot be changed or
 * removed through a namespace; namespace-owned ones belong to one namespace.
 */
export interface BucketDefinition {
  name: string;
  description: string;
  owner: "organization" | "namespace";
}

/** A change through a namespace touched an organization-owned bucket (the route answers 403). */
export class OrganizationBucketError extends Error {
  constructor(readonly bucket: string) {
    super(
      `bucket '${bucket}' is owned by the organization and cannot be changed or removed through a namespace`,
    );
    this.name = "OrganizationBucketError";
  }
}

/**
 * The effective buckets of a namespace (null: one never written, so only the organization's),
 * by name. On a name clash the organization's bucket wins.
 */
export async function effectiveBuckets(
  db: Db,
  organizationId: string,
  namespaceId: string | null,
): Promise<BucketDefinition[]> {
  const rows = await statement<{ name: string; description: string; org: number }>(
    db,
    `SELECT name, description, namespace_id IS NULL AS org FROM profile_buckets
       WHERE organization_id = $1 AND (namespace_id IS NULL OR namespace_id = $2)
       ORDER BY name, org DESC`,
  ).all(organizationId, namespaceId);
  const out = new Map<string, BucketDefinition>();
  for (const r of rows) {
    if (!out.has(r.name)) {
      out.set(r.name, {
        name: r.name,
        description: r.description,
        owner: r.org ? "organization" : "namespace",
      });
    }
  }
  return [...out.values()];
}

export const bucketMap = (buckets: readonly BucketDefinition[]): Record<string, string> =>
  Object.fromEntries(buckets.map((b) => [b.name, b.description]));

async function organizationBucketNames(db: Db, organizationId: string): Promise<Set<string>> {
  const rows = await statement<{ name: string }>(
    db,
    "SELECT name FROM profile_buckets WHERE organization_id = $1 AND namespace_id IS NULL",
  ).all(organizationId);
  return new Set(rows.map((r) => r.name));
}

/**
 * Adds or updates a namespace's buckets (the others stay), making the namespace (by name) in the
 * same transaction; answers its id. Throws OrganizationBucketError, changing nothing (not even
 * making the namespace), when any name is an organization-owned bucket.
 */
export async function putBuckets(
  db: Db,
  organizationId: string,
  namespace: string,
  buckets: Record<string, string>,
): Promise<string> {
  return await documentTransaction(db, null, async () => {
    const namespaceId = (await ensureNamespace(db, organizationId, namespace)).id;
    const owned = await organizationBucketNames(db, organizationId);
    const clash = Object.keys(buckets).find((n) => owned.has(n));
    if (clash !== undefined) throw new OrganizationBucketError(clash);
    const t = now();
    const upsert = statement(
      db,
      `INSERT INTO profile_buckets (organization_id, namespace_id, name, description, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT(namespace_id, name) WHERE namespace_id IS NOT NULL
       DO UPDATE SET description = excluded.description, updated_at = excluded.updated_at`,
    );
    for (const [name, description] of Object.entries(buckets)) {
      await upsert.run(organizationId, namespaceId, name, description, t, t);
    }
    return namespaceId;
  });
}

/**
 * Removes namespace buckets by name (names the namespace does not have are no error). Throws
 * OrganizationBucketError, changing nothing, when any name is an organization-owned bucket.
 */
export async function deleteBuckets(
  db: Db,
  organizationId: string,
  namespaceId: string | null,
  names: readonly string[],
) {
  await transaction(db, async () => {
    const owned = await organizationBucketNames(db, organizationId);
    const clash = names.find((n) => owned.has(n));
    if (clash !== undefined) throw new OrganizationBucketError(clash);
    if (!namespaceId) return;
    await statement(
      db,
      `DELETE FROM profile_buckets WHERE namespace_id = $1 AND ${db.dialect.isIn("name", "$2", "text")}`,
    ).run(namespaceId, db.dialect.list(names));
  });
}

/** Which memories a profile shows: the namespace's latest memories, live at `at`, that pass `filter`. */
export interface ProfileScope {
  namespaceId: string;
  filter: Filter | undefined;
  /** ISO time that `forget_after` is compared with. */
  at: string;
}

/** Latest, live memories of the scope that pass the filter, over alias `m`; parameters added to `p`. */
function liveScope(scope: ProfileScope, p: Params, form?: FilterForm): string {
  return `m.namespace_id = ${p.add(scope.namespaceId)} AND m.is_latest = 1 AND ${liveMemory("m", p.add(scope.at))}
          AND ${compileFilter(scope.filter, MEMORY_FILTER_TARGET, p, form)}`;
}

/** A profile candidate: whose fact it is and what it sets, and who said it (memory/whose.ts reads them). */
export interface ProfileRow {
  id: string;
  memory: string;
  subject: string | null;
  subject_kind: SubjectKind | null;
  attribute: string | null;
  is_static: number;
  document_id: string | null;
  speaker: string | null;
}

const PROFILE_COLUMNS =
  "m.id, m.memory, m.subject, m.subject_kind, m.attribute, m.is_static, m.document_id, m.speaker";

/** The scope's live memories that also meet `where` (over `m`, its values added to `p`), newest first. */
async function profileRows(
  db: Db,
  scope: ProfileScope,
  where: (p: Params) => string,
  limit: number,
): Promise<ProfileRow[]> {
  const p = new Params(db.dialect);
  return await statement<ProfileRow>(
    db,
    `SELECT ${PROFILE_COLUMNS} FROM memories m WHERE ${liveScope(scope, p, filterFormFor(db))} AND ${where(p)}
     ORDER BY m.created_at DESC, m.rowid DESC LIMIT ${p.add(limit)}`,
  ).all(...p.values);
}

/** The scope's static (or dynamic) memories, newest first, at most `limit`. */
export async function profileSection(
  db: Db,
  scope: ProfileScope,
  isStatic: boolean,
  limit: number,
): Promise<ProfileRow[]> {
  return await profileRows(db, scope, (p) => `m.is_static = ${p.add(isStatic ? 1 : 0)}`, limit);
}

/**
 * The user's facts of these slots told as events ("joined Northwind", "moved to Braga"): the
 * current value of a lasting slot, newest first, at most `limit`.
 */
export async function profileChanges(
  db: Db,
  scope: ProfileScope,
  slots: readonly string[],
  limit: number,
): Promise<ProfileRow[]> {
  return await profileRows(
    db,
    scope,
    (p) =>
      `m.is_static = 0 AND m.subject_kind = 'user' AND ${db.dialect.isIn("m.attribute", p.add(db.dialect.list(slots)), "text")}`,
    limit,
  );
}

/**
 * The documents the scope's memories come from, as one memory each: the first a document gave
 * about itself (what it is), the most recently added documents first, at most `limit`.
 */
export async function profileDocuments(db: Db, scope: ProfileScope, limit: number): Promise<ProfileRow[]> {
  const p = new Params(db.dialect);
  return await statement<ProfileRow>(
    db,
    `SELECT ${PROFILE_COLUMNS} FROM memories m WHERE m.rowid IN (
       SELECT MIN(m.rowid) FROM memories m WHERE ${liveScope(scope, p, filterFormFor(db))}
         AND m.subject_kind = 'document' AND m.document_id IS NOT NULL
       GROUP BY m.document_id)
     ORDER BY m.created_at DESC, m.rowid DESC LIMIT ${p.add(limit)}`,
  ).all(...p.values);
}

/**
 * The scope's memories holding any of `stems` in their own text, those holding the most (rarer
 * stems counting more) first, at most `limit` (a bucket's candidates).
 */
export async function profileMemoriesHolding(
  db: Db,
  scope: ProfileScope,
  stems: readonly string[],
  limit: number,
): Promise<ProfileRow[]> {
  return await memoriesHolding<ProfileRow>(
    db,
    scope.namespaceId,
    stems,
    (p) => liveScope(scope, p, filterFormFor(db)),
    limit,
    PROFILE_COLUMNS,
  );
}
