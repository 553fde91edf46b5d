import type { Db } from "./connection.js";
import { statement } from "./statements.js";

/**
 * The rows a search's selected candidates are read back from, by rowid, with what a hit shows:
 * a chunk with its document's metadata, a memory with its sources, a document as a citation.
 */

export interface ChunkHitRow {
  rowid: number;
  id: string;
  document_id: string;
  position: number;
  /** The label and content (see the schema's chunks.text). */
  text: string;
  start_offset: number;
  end_offset: number;
  created_at: string;
  metadata: string;
}

export interface MemoryHitRow {
  rowid: number;
  id: string;
  memory: string;
  metadata: string;
  is_latest: number;
  is_inference: number;
  document_id: string | null;
  created_at: string;
  updated_at: string;
  event_date: string | null;
  /** The documents it came from and where in them. */
  sources: MemorySourceSpan[];
}

export interface DocumentCitationRow {
  id: string;
  custom_id: string | null;
  title: string | null;
  type: string;
  url: string | null;
  source: string | null;
  metadata: string;
  document_date: string | null;
  /** Whether a memory of it was forgotten (its sentences in forgotten_sentences): 1 or 0. */
  has_forgotten: number;
}

/** Chunks by rowid, each with its document's metadata (a rowid no longer stored is left out). */
export async function chunkHitRows(db: Db, rowids: readonly number[]): Promise<ChunkHitRow[]> {
  const chunks = db.dialect.rowsOf("chunks", "c", "rowid", "$1", "bigint");
  return (await statement(
    db,
    `SELECT c.rowid, c.id, c.document_id, c.position, c.text, c.start_offset, c.end_offset, c.created_at, d.metadata
       FROM ${chunks.from} CROSS JOIN documents d WHERE ${chunks.where} AND d.id = c.document_id`,
  ).all(db.dialect.list(rowids))) as unknown as ChunkHitRow[];
}

/**
 * Memories by rowid, each with its sources (a rowid no longer stored is left out): a row per
 * memory and source, in one statement (a round trip less per search over a wire).
 */
export async function memoryHitRows(db: Db, rowids: readonly number[]): Promise<MemoryHitRow[]> {
  const memories = db.dialect.rowsOf("memories", "m", "rowid", "$1", "bigint");
  const rows = (await statement(
    db,
    `SELECT m.rowid, m.id, m.memory, m.metadata, m.is_latest, m.is_inference, m.document_id,
            m.created_at, m.updated_at, m.event_date,
            s.document_id AS source_document_id, s.start_offset AS source_start, s.end_offset AS source_end
     FROM ${memories.from} LEFT JOIN memory_sources s ON s.memory_id = m.id WHERE ${memories.where}`,
  ).all(db.dialect.list(rowids))) as unknown as (Omit<MemoryHitRow, "sources"> & {
    source_document_id: string | null;
    source_start: number | null;
    source_end: number | null;
  })[];
  const byRowid = new Map<number, MemoryHitRow>();
  for (const { source_document_id, source_start, source_end, ...row } of rows) {
    let hit = byRowid.get(row.rowid);
    if (!hit) {
      hit = { ...row, sources: [] };
      byRowid.set(row.rowid, hit);
    }
    if (source_document_id !== null)
      hit.sources.push({ documentId: source_document_id, start: source_start, end: source_end });
  }
  return [...byRowid.values()];
}

/** Where a memory came from: a source document and the span its sentence is there (null: unknown). */
export interface MemorySourceSpan {
  documentId: string;
  start: number | null;
  end: number | null;
}

/** Each memory's sources: the documents it came from and where in them. */
export async function memorySourceSpans(
  db: Db,
  memoryIds: readonly string[],
): Promise<Map<string, MemorySourceSpan[]>> {
  const spans = db.dialect.rowsOf("memory_sources", "s", "memory_id", "$1", "text");
  const rows = (await statement(
    db,
    `SELECT s.memory_id, s.document_id, s.start_offset, s.end_offset
     FROM ${spans.from} WHERE ${spans.where}`,
  ).all(db.dialect.list(memoryIds))) as {
    memory_id: string;
    document_id: string;
    start_offset: number | null;
    end_offset: number | null;
  }[];
  const sources = new Map<string, MemorySourceSpan[]>();
  for (const r of rows) {
    const list = sources.get(r.memory_id) ?? [];
    list.push({ documentId: r.document_id, start: r.start_offset, end: r.end_offset });
    sources.set(r.memory_id, list);
  }
  return sources;
}

/** What a reader needs to cite a document (a hit's `included.document`). */
export async function documentCitationRow(
  db: Db,
  documentId: string,
): Promise<DocumentCitationRow | undefined> {
  return (await statement(
    db,
    `SELECT id, custom_id, title, type, url, source, metadata, document_date,
       EXISTS (SELECT 1 FROM forgotten_sentences f WHERE f.document_id = documents.id) AS has_forgotten
     FROM documents WHERE id = $1`,
  ).get(documentId)) as DocumentCitationRow | undefined;
}

/** The namespace's latest document date (null without a dated document). */
export async function latestDocumentDate(db: Db, namespaceId: string): Promise<string | null> {
  const row = (await statement(
    db,
    "SELECT max(document_date) AS d FROM documents WHERE namespace_id = $1 AND document_date IS NOT NULL",
  ).get(namespaceId)) as { d: string | null } | undefined;
  return row?.d ?? null;
}
