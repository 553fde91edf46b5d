import type { Filter } from "../../api/filter.js";
import { type Db, Params } from "./connection.js";
import { compileFilter, type FilterForm, type FilterTarget, filterFormFor } from "./filter.js";
import { liveMemory } from "./memories.js";
import {
  type Bm25Weights,
  type Corpus,
  type ScoredUnit,
  topUnitsPage,
  type WeightedTerm,
} from "./search-index.js";
import { arrayStatement, statement } from "./statements.js";

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
    : liveMemory("m", p.add(scope.now ?? new Date().toISOString()));
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

/**
 * The subset of `rowids` visible in `scope`, each with who said it (a conversation turn's role,
 * lowercased; null: nobody), which a search that names people weighs by (search/person.ts).
 */
export async function visibleRowids(
  db: Db,
  corpus: Corpus,
  rowids: readonly number[],
  scope: Scope,
): Promise<Map<number, string | null>> {
  if (rowids.length === 0) return new Map();
  const p = new Params(db.dialect);
  const t = TABLE[corpus];
  const candidates = db.dialect.rowsOf(t.table, t.alias, "rowid", p.add(db.dialect.list(rowids)), "bigint");
  const rows = await statement<{ rowid: number; speaker: string | null }>(
    db,
    `SELECT ${ROWID[corpus]} AS rowid, ${t.alias}.speaker FROM ${candidates.from} ${t.joined} ${candidates.where}
     AND ${scopeSql(corpus, scope, p, filterFormFor(db))}`,
  ).all(...p.values);
  return new Map(rows.map((r) => [r.rowid, r.speaker]));
}

/** A unit of topUnits' page: its partial BM25 score and length, whether it is visible (1, else null), its speaker. */
export type PageUnit = [...ScoredUnit, visible: 1 | null, speaker: string | null];

/**
 * The page's rows joined to `page.unit`, `scope`'s conditions in the join: `visible` is not null
 * for a visible one. A join, not a subquery per unit: PostgreSQL plans a filter's thousands of
 * leaves (each a subquery of its own) many times slower inside a correlated subquery than in a
 * join or a WHERE (as visibleRowids has them), past the statement timeout of a filter test.
 */
const PAGE_ROWS: Record<
  Corpus,
  { join: (scope: string) => string; visible: string; speaker: string; from: string; key: string }
> = {
  chunks: {
    join: (scope) =>
      `LEFT JOIN chunks c ON c.rowid = page.unit LEFT JOIN documents d ON d.id = c.document_id AND ${scope}`,
    visible: "d.id",
    speaker: "c.speaker",
    from: "chunks c JOIN documents d ON d.id = c.document_id",
    key: "c.rowid",
  },
  memories: {
    join: (scope) => `LEFT JOIN memories m ON m.rowid = page.unit AND ${scope}`,
    visible: "m.rowid",
    speaker: "m.speaker",
    from: "memories m",
    key: "m.rowid",
  },
};

/**
 * A page of the space's units by BM25 over `terms` (search-index.ts topUnitsPage), each with
 * visibleRowids' answer, in one statement: the database sums the postings and checks the page's
 * units in one round trip.
 */
export async function topUnits(
  db: Db,
  corpus: Corpus,
  scope: Scope,
  space: number,
  terms: readonly WeightedTerm[],
  weights: Bm25Weights,
  limit: number,
  offset = 0,
): Promise<PageUnit[]> {
  if (terms.length === 0 || limit <= 0) return [];
  const p = new Params(db.dialect);
  const page = topUnitsPage(p, space, terms, weights, limit, offset);
  const rows = PAGE_ROWS[corpus];
  const visible = scopeSql(corpus, scope, p, filterFormFor(db));
  // Across a wire, each unit of the page looked up by its key (a lateral join): without statistics
  // PostgreSQL joined the page to the namespace's every memory by hash instead.
  const join = db.dialect.remote
    ? `LEFT JOIN LATERAL (SELECT ${rows.visible} AS visible, ${rows.speaker} AS speaker
         FROM ${rows.from} WHERE ${rows.key} = page.unit AND ${visible} OFFSET 0) v ON TRUE`
    : rows.join(visible);
  return await arrayStatement<PageUnit>(
    db,
    `${page}
     SELECT page.unit, page.bm25, page.length,
       CASE WHEN ${db.dialect.remote ? "v.visible" : rows.visible} IS NULL THEN NULL ELSE 1 END AS visible,
       ${db.dialect.remote ? "v.speaker" : rows.speaker} AS speaker
     FROM page ${join}
     ORDER BY page.bm25 DESC, page.unit`,
  ).all(...p.values);
}

/** A document added but not indexed yet: what a search matches word for word (search/pending.ts). */
export interface UnindexedDocumentRow {
  id: string;
  custom_id: string | null;
  /** Its stored content, cut at the length asked for. */
  content: string;
  metadata: string;
  updated_at: string;
  /** Whether a memory of it was forgotten (its sentences in forgotten_sentences): 1 or 0. */
  has_forgotten: number;
}

/**
 * The scope's documents not indexed yet, most recently changed first, at most `limit`, each
 * content cut to `maxChars`: read from the partial index of exactly those (migration 13), so a
 * namespace with none pays one index probe.
 */
export async function unindexedDocuments(
  db: Db,
  scope: Scope,
  limit: number,
  maxChars: number,
): Promise<UnindexedDocumentRow[]> {
  const p = new Params(db.dialect, scope.namespaceId);
  return await statement<UnindexedDocumentRow>(
    db,
    `SELECT d.id, d.custom_id, substr(d.content, 1, ${p.add(maxChars)}) AS content, d.metadata,
       d.updated_at, EXISTS (SELECT 1 FROM forgotten_sentences f WHERE f.document_id = d.id) AS has_forgotten
     FROM documents d
     WHERE d.namespace_id = $1 AND d.status NOT IN ('done', 'failed')
       AND ${compileFilter(scope.filter, CHUNK_FILTER_TARGET, p, filterFormFor(db))}
     ORDER BY d.updated_at DESC LIMIT ${p.add(limit)}`,
  ).all(...p.values);
}
