import type { Metadata } from "../../api/common.js";
import type { Filter } from "../../api/filter.js";
import type { Memory } from "../../api/memories.js";
import { compileFilter } from "../search/filter.js";
import { type Db, parseJson } from "./db.js";
import { orderBy, type Page, type PageRequest } from "./pages.js";

export interface MemoryRow {
  rowid: number;
  id: string;
  namespace_id: string;
  memory: string;
  metadata: string;
  is_static: number;
  is_inference: number;
  is_latest: number;
  is_forgotten: number;
  version: number;
  parent_memory_id: string | null;
  root_memory_id: string | null;
  forget_after: string | null;
  forget_reason: string | null;
  subject: string | null;
  attribute: string | null;
  event_date: string | null;
  document_id: string | null;
  created_at: string;
  updated_at: string;
}

/** Forgotten, or past its forget_after time. */
export const isForgotten = (m: MemoryRow, at = new Date().toISOString()) =>
  m.is_forgotten === 1 || (m.forget_after !== null && m.forget_after <= at);

/** SQL twin of isForgotten over alias `m`, with the current time as parameter. */
export const LIVE_MEMORY_SQL = "(m.is_forgotten = 0 AND (m.forget_after IS NULL OR m.forget_after > ?))";

export function toMemory(m: MemoryRow): Memory {
  return {
    id: m.id,
    memory: m.memory,
    metadata: parseJson<Metadata>(m.metadata, {}),
    isStatic: m.is_static === 1,
    isInference: m.is_inference === 1,
    isLatest: m.is_latest === 1,
    isForgotten: isForgotten(m),
    version: m.version,
    parentMemoryId: m.parent_memory_id,
    rootMemoryId: m.root_memory_id,
    forgetAfter: m.forget_after,
    forgetReason: m.forget_reason,
    documentId: m.document_id,
    system: { createdAt: m.created_at, updatedAt: m.updated_at },
  };
}

/** Memories of a namespace, newest first by default; forgotten ones only when asked. */
export function listMemories(
  db: Db,
  namespaceId: string,
  page: PageRequest,
  filter: Filter | undefined,
  includeForgotten: boolean,
): Page<Memory> {
  const f = compileFilter(filter, {
    metadata: "m.metadata",
    source: "d.source",
    type: "d.type",
    documentId: "m.document_id",
  });
  // A plain list shows what is true now: live, latest versions. include.forgotten shows every row.
  const live = includeForgotten ? "1" : `m.is_latest = 1 AND ${LIVE_MEMORY_SQL}`;
  const liveParams = includeForgotten ? [] : [new Date().toISOString()];
  const from = `FROM memories m LEFT JOIN documents d ON d.id = m.document_id
    WHERE m.namespace_id = ? AND ${live} AND ${f.sql}`;
  const params = [namespaceId, ...liveParams, ...f.params];
  const total = (db.prepare(`SELECT count(*) AS n ${from}`).get(...params) as { n: number }).n;
  const rows = db
    .prepare(`SELECT m.* ${from} ORDER BY ${orderBy("m", page)} LIMIT ? OFFSET ?`)
    .all(...params, page.limit, (page.page - 1) * page.limit) as unknown as MemoryRow[];
  return { items: rows.map(toMemory), total };
}

/** Memories that came from a document (its sources, or its latest source). */
export function memoriesOfDocument(db: Db, documentId: string): Memory[] {
  const rows = db
    .prepare(
      `SELECT m.* FROM memories m WHERE m.document_id = ?
         OR m.id IN (SELECT memory_id FROM memory_sources WHERE document_id = ?)
       ORDER BY m.created_at, m.rowid`,
    )
    .all(documentId, documentId) as unknown as MemoryRow[];
  return rows.map(toMemory);
}
