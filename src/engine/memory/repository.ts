import type { Metadata } from "../../api/common.js";
import { type Db, newId, now, parseJson } from "../store/db.js";
import { LIVE_MEMORY_SQL, type MemoryRow } from "../store/memories.js";

/**
 * Memory rows as the memory services need them (the shared store/memories.ts holds what lists and
 * documents need). Every function is scoped by namespace and expects to run inside the caller's
 * transaction when it writes.
 */

export interface NewMemoryRow {
  namespaceId: string;
  memory: string;
  metadata: Metadata;
  isStatic: boolean;
  isInference: boolean;
  subject: string | null;
  attribute: string | null;
  eventDate: string | null;
  forgetAfter: string | null;
  documentId: string;
  source?: { start: number; end: number } | undefined;
  /** The version this one supersedes (an `updates` relation). */
  parent?: MemoryRow | undefined;
  /** Its embedding, when an embedder is configured. */
  vector?: { model: string; embedding: Float32Array } | undefined;
}

export function getMemoryRow(db: Db, namespaceId: string, id: string): MemoryRow | undefined {
  return db.prepare("SELECT * FROM memories WHERE id = ? AND namespace_id = ?").get(id, namespaceId) as
    | MemoryRow
    | undefined;
}

/** Inserts a memory with its first source; a parent is marked no longer latest. */
export function insertMemory(db: Db, m: NewMemoryRow): MemoryRow {
  const t = now();
  const id = newId("mem");
  const version = m.parent ? m.parent.version + 1 : 1;
  const root = m.parent ? (m.parent.root_memory_id ?? m.parent.id) : null;
  db.prepare(
    `INSERT INTO memories (id, namespace_id, memory, metadata, is_static, is_inference, is_latest, is_forgotten,
       version, parent_memory_id, root_memory_id, forget_after, subject, attribute, event_date, document_id,
       created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 1, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    m.namespaceId,
    m.memory,
    JSON.stringify(m.metadata),
    m.isStatic ? 1 : 0,
    m.isInference ? 1 : 0,
    version,
    m.parent?.id ?? null,
    root,
    m.forgetAfter,
    m.subject,
    m.attribute,
    m.eventDate,
    m.documentId,
    t,
    t,
  );
  if (m.parent) {
    db.prepare("UPDATE memories SET is_latest = 0, updated_at = ? WHERE id = ?").run(t, m.parent.id);
    addRelation(db, id, m.parent.id, "updates");
  }
  addSource(db, id, m.documentId, m.source);
  const row = db.prepare("SELECT * FROM memories WHERE id = ?").get(id) as unknown as MemoryRow;
  if (m.vector) {
    const v = m.vector.embedding;
    db.prepare("INSERT INTO memory_vectors (memory_rowid, model, embedding) VALUES (?, ?, ?)").run(
      row.rowid,
      m.vector.model,
      new Uint8Array(v.buffer, v.byteOffset, v.byteLength),
    );
  }
  return row;
}

export function addRelation(
  db: Db,
  fromId: string,
  toId: string,
  relation: "updates" | "extends" | "derives",
) {
  db.prepare(
    "INSERT OR IGNORE INTO memory_relations (from_id, to_id, relation, created_at) VALUES (?, ?, ?, ?)",
  ).run(fromId, toId, relation, now());
}

export function addSource(
  db: Db,
  memoryId: string,
  documentId: string,
  span?: { start: number; end: number },
) {
  db.prepare(
    `INSERT INTO memory_sources (memory_id, document_id, start_offset, end_offset, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(memory_id, document_id) DO UPDATE SET start_offset = excluded.start_offset,
       end_offset = excluded.end_offset`,
  ).run(memoryId, documentId, span?.start ?? null, span?.end ?? null, now());
}

/**
 * A repeated fact: the memory gains a source, and the new document becomes its latest source (its
 * metadata with it). A restated fact without an expiry keeps no expiry.
 */
export function mergeSource(
  db: Db,
  existing: MemoryRow,
  documentId: string,
  metadata: Metadata,
  forgetAfter: string | null,
  span?: { start: number; end: number },
): void {
  const expiry =
    existing.forget_after === null || forgetAfter === null
      ? null
      : existing.forget_after > forgetAfter
        ? existing.forget_after
        : forgetAfter;
  db.prepare(
    "UPDATE memories SET document_id = ?, metadata = ?, forget_after = ?, updated_at = ? WHERE id = ?",
  ).run(documentId, JSON.stringify(metadata), expiry, now(), existing.id);
  addSource(db, existing.id, documentId, span);
}

/** Latest memories about one subject and attribute (newest first), live or explicitly forgotten. */
export function latestBySubjectAttribute(
  db: Db,
  namespaceId: string,
  subject: string,
  attribute: string,
): MemoryRow[] {
  return db
    .prepare(
      `SELECT m.* FROM memories m WHERE m.namespace_id = ? AND m.subject = ? AND m.attribute = ? AND m.is_latest = 1
       ORDER BY m.created_at DESC, m.rowid DESC LIMIT 20`,
    )
    .all(namespaceId, subject, attribute) as unknown as MemoryRow[];
}

/** Rows of the memories index holding each stem (FTS5's own document frequency). */
export function memoryTermFrequency(db: Db, stems: readonly string[]): { rows: number; df: number[] } {
  // A per-connection vocabulary view of the index (temp: nothing is added to the file).
  db.exec(
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memctx_memory_terms USING fts5vocab(main, memories_fts, 'row')",
  );
  const df = db.prepare("SELECT doc FROM temp.memctx_memory_terms WHERE term = ?");
  const rows = (db.prepare("SELECT count(*) AS n FROM memories").get() as { n: number }).n;
  return { rows, df: stems.map((s) => (df.get(s) as { doc: number } | undefined)?.doc ?? 0) };
}

/**
 * Latest memories of the namespace among the index's best matches of `match` (an FTS5 expression),
 * best first. The index spans every namespace: ranking only its top `window` rows keeps this cheap
 * (FTS5 then keeps the best rows while scoring) at the cost of missing weak matches.
 */
export function latestByText(
  db: Db,
  namespaceId: string,
  match: string,
  limit: number,
  window = 400,
): MemoryRow[] {
  return db
    .prepare(
      `SELECT m.* FROM (SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?) f
       JOIN memories m ON m.rowid = f.rowid
       WHERE m.namespace_id = ? AND m.is_latest = 1
       ORDER BY f.rank LIMIT ?`,
    )
    .all(match, window, namespaceId, limit) as unknown as MemoryRow[];
}

/** The namespace's most recent live, latest memories (the extractor's context). */
export function recentLiveMemories(db: Db, namespaceId: string, limit: number): MemoryRow[] {
  return db
    .prepare(
      `SELECT m.* FROM memories m WHERE m.namespace_id = ? AND m.is_latest = 1 AND ${LIVE_MEMORY_SQL}
       ORDER BY m.created_at DESC, m.rowid DESC LIMIT ?`,
    )
    .all(namespaceId, now(), limit) as unknown as MemoryRow[];
}

export function markForgotten(db: Db, id: string, reason: string): void {
  db.prepare(
    "UPDATE memories SET is_forgotten = 1, forget_reason = COALESCE(forget_reason, ?), updated_at = ? WHERE id = ?",
  ).run(reason, now(), id);
}

export const memoryMetadata = (m: MemoryRow): Metadata => parseJson<Metadata>(m.metadata, {});
