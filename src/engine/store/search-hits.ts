import type { Db } from "./connection.js";
import type { Corpus } from "./search-index.js";
import { statement } from "./statements.js";
import { type StoredVector, VECTORS_OF } from "./vectors.js";

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
  /** Whose fact it is: the user's, another person's, a thing's, a document's (null: not said). */
  subject_kind: string | null;
  /** The slot it sets (extract/slots.ts: "work", "drink"), or null. */
  attribute: string | null;
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

/** The rows of hitRows, and the vectors asked for with them. */
export interface HitRows {
  chunks: ChunkHitRow[];
  memories: MemoryHitRow[];
  /** Each row's stored vector of the model asked for (rows without one are left out). */
  vectors: Record<Corpus, StoredVector[]>;
}

/** The vectors hitRows reads with its rows: of `model`, for the rows of the corpora in `of`. */
export interface VectorsAsked {
  model: string;
  of: readonly Corpus[];
}

/**
 * A search's hits by rowid, in one statement (a round trip less per search over a wire): chunks,
 * each with its document's metadata, and memories, each with its sources (a row per memory and
 * source), and, when asked, their vectors (a search scores its lexical candidates' cosines from
 * the rows it reads anyway). A rowid no longer stored is left out.
 */
export async function hitRows(
  db: Db,
  chunkRowids: readonly number[],
  memoryRowids: readonly number[],
  vectors?: VectorsAsked,
): Promise<HitRows> {
  const out: HitRows = { chunks: [], memories: [], vectors: { chunks: [], memories: [] } };
  if (chunkRowids.length === 0 && memoryRowids.length === 0) return out;
  const chunks = db.dialect.rowsOf("chunks", "c", "rowid", "$1", "bigint");
  const memories = db.dialect.rowsOf("memories", "m", "rowid", "$2", "bigint");
  const sources = db.dialect.joinByKey(
    "memory_sources",
    "s",
    "s.document_id, s.start_offset, s.end_offset",
    "s.memory_id = m.id",
  );
  const vectorOf = (corpus: Corpus, alias: string) => {
    if (!vectors?.of.includes(corpus)) return { column: "NULL", join: "" };
    const { table, key } = VECTORS_OF[corpus];
    return {
      column: "v.embedding",
      join: db.dialect.joinByKey(table, "v", "v.embedding", `v.${key} = ${alias}.rowid AND v.model = $3`),
    };
  };
  const chunkVector = vectorOf("chunks", "c");
  const memoryVector = vectorOf("memories", "m");
  // One column list for both: `text` a chunk's text or a memory's, the other kind's columns null.
  const rows = await statement<HitRow>(
    db,
    `SELECT 'chunks' AS corpus, c.rowid, c.id, c.document_id, c.text, d.metadata, c.created_at,
            c.position, c.start_offset, c.end_offset, NULL AS is_latest, NULL AS is_inference,
            NULL AS updated_at, NULL AS event_date, NULL AS subject_kind, NULL AS attribute,
            NULL AS source_document_id, NULL AS source_start, NULL AS source_end, ${chunkVector.column} AS embedding
     FROM ${chunks.from} CROSS JOIN documents d ${chunkVector.join} WHERE ${chunks.where} AND d.id = c.document_id
     UNION ALL
     SELECT 'memories', m.rowid, m.id, m.document_id, m.memory, m.metadata, m.created_at,
            NULL, NULL, NULL, m.is_latest, m.is_inference, m.updated_at, m.event_date, m.subject_kind, m.attribute,
            s.document_id, s.start_offset, s.end_offset, ${memoryVector.column}
     FROM ${memories.from} ${sources} ${memoryVector.join} WHERE ${memories.where}`,
  ).all(
    db.dialect.list(chunkRowids),
    db.dialect.list(memoryRowids),
    ...(chunkVector.join || memoryVector.join ? [vectors!.model] : []),
  );
  const memoryRows = new Map<number, MemoryHitRow>();
  for (const r of rows) {
    if (r.corpus === "chunks") {
      if (r.embedding) out.vectors.chunks.push({ rowid: r.rowid, embedding: r.embedding });
      out.chunks.push({
        rowid: r.rowid,
        id: r.id,
        document_id: r.document_id!,
        position: r.position!,
        text: r.text,
        start_offset: r.start_offset!,
        end_offset: r.end_offset!,
        created_at: r.created_at,
        metadata: r.metadata,
      });
      continue;
    }
    let hit = memoryRows.get(r.rowid);
    if (!hit) {
      if (r.embedding) out.vectors.memories.push({ rowid: r.rowid, embedding: r.embedding });
      hit = {
        rowid: r.rowid,
        id: r.id,
        memory: r.text,
        metadata: r.metadata,
        is_latest: r.is_latest!,
        is_inference: r.is_inference!,
        document_id: r.document_id,
        created_at: r.created_at,
        updated_at: r.updated_at!,
        event_date: r.event_date,
        subject_kind: r.subject_kind,
        attribute: r.attribute,
        sources: [],
      };
      memoryRows.set(r.rowid, hit);
    }
    if (r.source_document_id !== null)
      hit.sources.push({ documentId: r.source_document_id, start: r.source_start, end: r.source_end });
  }
  out.memories = [...memoryRows.values()];
  return out;
}

/** A row of hitRows' statement: a chunk's or a memory's (with one of its sources) columns. */
interface HitRow {
  corpus: "chunks" | "memories";
  rowid: number;
  id: string;
  document_id: string | null;
  text: string;
  metadata: string;
  created_at: string;
  position: number | null;
  start_offset: number | null;
  end_offset: number | null;
  is_latest: number | null;
  is_inference: number | null;
  updated_at: string | null;
  event_date: string | null;
  subject_kind: string | null;
  attribute: string | null;
  source_document_id: string | null;
  source_start: number | null;
  source_end: number | null;
  /** The row's vector, when asked for (VectorsAsked). */
  embedding: Uint8Array | null;
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
  const rows = await statement<{
    memory_id: string;
    document_id: string;
    start_offset: number | null;
    end_offset: number | null;
  }>(
    db,
    `SELECT s.memory_id, s.document_id, s.start_offset, s.end_offset
     FROM ${spans.from} WHERE ${spans.where}`,
  ).all(db.dialect.list(memoryIds));
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
  return await statement<DocumentCitationRow>(
    db,
    `SELECT id, custom_id, title, type, url, source, metadata, document_date,
       EXISTS (SELECT 1 FROM forgotten_sentences f WHERE f.document_id = documents.id) AS has_forgotten
     FROM documents WHERE id = $1`,
  ).get(documentId);
}

/** The namespace's latest document date (null without a dated document). */
export async function latestDocumentDate(db: Db, namespaceId: string): Promise<string | null> {
  const row = await statement<{ d: string | null }>(
    db,
    "SELECT max(document_date) AS d FROM documents WHERE namespace_id = $1 AND document_date IS NOT NULL",
  ).get(namespaceId);
  return row?.d ?? null;
}
