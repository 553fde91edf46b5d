import type { Filter } from "../../api/filter.js";
import { type Db, Params } from "./connection.js";
import { compileFilter, type FilterForm, type FilterTarget, filterFormFor } from "./filter.js";
import type { Corpus } from "./search-index.js";
import { statement } from "./statements.js";

export type { Corpus };

/** Which rows one search may see. */
export interface Scope {
  namespaceId: string;
  filter?: Filter | undefined;
  /** Memories: also forgotten ones and those past `forget_after`. */
  includeForgotten?: boolean | undefined;
  /** ISO time that `forget_after` is compared with; now by default. */
  now?: string | undefined;
  /** Memories: also versions a newer one superseded (search answers with their latest, see versions.ts). */
  includeSuperseded?: boolean | undefined;
}

/** The filter target of a chunk row `c` joined with its document `d`. */
export const CHUNK_FILTER_TARGET: FilterTarget = {
  metadata: "d.metadata",
  source: "d.source",
  type: "d.type",
  // A caller may name a document by the service id or by its own id.
  documentId: ["d.id", "d.custom_id"],
};

/** The filter target of a memory row `m`: its metadata is the source document's. */
export const MEMORY_FILTER_TARGET: FilterTarget = {
  metadata: "m.metadata",
  source: "(SELECT sd.source FROM documents sd WHERE sd.id = m.document_id)",
  type: "(SELECT sd.type FROM documents sd WHERE sd.id = m.document_id)",
  documentId: ["m.document_id", "(SELECT sd.custom_id FROM documents sd WHERE sd.id = m.document_id)"],
};

/**
 * The conditions that make a row visible to a search in this scope, over the aliases `c`/`d`
 * (chunks) or `m` (memories): namespace, document status `done`, latest and live memories, filter.
 */
export function scopeSql(corpus: Corpus, scope: Scope, p: Params, form?: FilterForm): string {
  if (corpus === "chunks") {
    return `c.namespace_id = ${p.add(scope.namespaceId)} AND d.status = 'done'
      AND ${compileFilter(scope.filter, CHUNK_FILTER_TARGET, p, form)}`;
  }
  const live = scope.includeForgotten
    ? "TRUE"
    : `m.is_forgotten = 0 AND (m.forget_after IS NULL OR m.forget_after > ${p.add(scope.now ?? new Date().toISOString())})`;
  return `m.namespace_id = ${p.add(scope.namespaceId)} AND ${scope.includeSuperseded ? "" : "m.is_latest = 1 AND "}${live}
    AND ${compileFilter(scope.filter, MEMORY_FILTER_TARGET, p, form)}`;
}

/**
 * The candidates' rows, looked up by rowid (Dialect.rowsOf): otherwise a planner may walk the
 * namespace's rows by index and probe the candidate list for each.
 */
const TABLE: Record<Corpus, { table: string; alias: string; joined: string }> = {
  chunks: { table: "chunks", alias: "c", joined: "CROSS JOIN documents d WHERE d.id = c.document_id AND" },
  memories: { table: "memories", alias: "m", joined: "WHERE" },
};
const ROWID: Record<Corpus, string> = { chunks: "c.rowid", memories: "m.rowid" };

/** The subset of `rowids` visible in `scope`. */
export async function visibleRowids(
  db: Db,
  corpus: Corpus,
  rowids: readonly number[],
  scope: Scope,
): Promise<Set<number>> {
  if (rowids.length === 0) return new Set();
  const p = new Params(db.dialect);
  const t = TABLE[corpus];
  const candidates = db.dialect.rowsOf(t.table, t.alias, "rowid", p.add(db.dialect.list(rowids)), "bigint");
  const rows = (await statement(
    db,
    `SELECT ${ROWID[corpus]} AS rowid FROM ${candidates.from} ${t.joined} ${candidates.where}
     AND ${scopeSql(corpus, scope, p, filterFormFor(db))}`,
  ).all(...p.values)) as { rowid: number }[];
  return new Set(rows.map((r) => r.rowid));
}

/** Whether the namespace holds any memory (hybrid search falls back to chunks without one). */
export async function hasMemories(db: Db, namespaceId: string): Promise<boolean> {
  return (
    (await statement(db, "SELECT 1 FROM memories WHERE namespace_id = $1 LIMIT 1").get(namespaceId)) !==
    undefined
  );
}
