import type { Db } from "./connection.js";
import { now } from "./db.js";
import { statement } from "./statements.js";

/*
 * Forgotten sentences (table forgotten_sentences): a forgotten memory's source sentences, by
 * document, and the rows that must stop saying them (chunks, their vectors, memory contexts).
 * The rules live in memory/forget.ts; these functions only read and write rows, inside the
 * caller's transaction when they write.
 */

export async function addForgottenSentence(
  db: Db,
  documentId: string,
  memoryId: string,
  sentence: string,
): Promise<void> {
  await statement(
    db,
    `INSERT INTO forgotten_sentences (document_id, memory_id, sentence, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (document_id, memory_id, sentence) DO NOTHING`,
  ).run(documentId, memoryId, sentence, now());
}

/** The sentences forgotten from a document, longest first (a longer one may hold a shorter one). */
export async function forgottenSentences(db: Db, documentId: string): Promise<string[]> {
  const rows = (await statement(
    db,
    "SELECT DISTINCT sentence FROM forgotten_sentences WHERE document_id = $1",
  ).all(documentId)) as { sentence: string }[];
  return rows.map((r) => r.sentence).sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
}

/** Whether a memory's sentences were recorded (the expiry sweep records each memory once). */
export async function hasForgottenSentences(db: Db, memoryId: string): Promise<boolean> {
  return (
    (await statement(db, "SELECT 1 AS x FROM forgotten_sentences WHERE memory_id = $1 LIMIT 1").get(
      memoryId,
    )) !== undefined
  );
}

/** A stored chunk as redaction reads it. */
export interface ChunkForRedaction {
  rowid: number;
  start_offset: number;
  end_offset: number;
  content: string;
  context: string;
  speaker: string | null;
}

/** `%text%` for LIKE with ESCAPE '\\': the text's own % and _ match themselves. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * A document's chunks that hold a forgotten sentence: those over one of `spans` (offsets in the
 * document's text) or whose context says one of `sentences`. Read by span and by sentence, not the
 * whole document: a forget in a document of tens of thousands of chunks reads a few.
 */
export async function chunksForRedaction(
  db: Db,
  documentId: string,
  spans: readonly { start: number; end: number }[],
  sentences: readonly string[],
): Promise<ChunkForRedaction[]> {
  const columns = "rowid, start_offset, end_offset, content, context, speaker";
  const found = new Map<number, ChunkForRedaction>();
  const over = statement(
    db,
    `SELECT ${columns} FROM chunks WHERE document_id = $1 AND start_offset < $2 AND end_offset > $3`,
  );
  for (const s of spans) {
    for (const r of (await over.all(documentId, s.end, s.start)) as unknown as ChunkForRedaction[])
      found.set(r.rowid, r);
  }
  const around = statement(
    db,
    `SELECT ${columns} FROM chunks WHERE document_id = $1 AND context LIKE $2 ESCAPE '\\'`,
  );
  for (const sentence of sentences) {
    for (const r of (await around.all(documentId, containing(sentence))) as unknown as ChunkForRedaction[])
      found.set(r.rowid, r);
  }
  return [...found.values()];
}

/**
 * A chunk's content and context rewritten (the search index follows: the update re-indexes it);
 * its vector goes, as it was made from the old text.
 */
export async function rewriteChunk(db: Db, rowid: number, content: string, context: string): Promise<void> {
  await statement(db, "UPDATE chunks SET content = $1, context = $2 WHERE rowid = $3").run(
    content,
    context,
    rowid,
  );
  await statement(db, "DELETE FROM chunk_vectors WHERE chunk_rowid = $1").run(rowid);
}

export async function deleteChunk(db: Db, rowid: number): Promise<void> {
  await statement(db, "DELETE FROM chunks WHERE rowid = $1").run(rowid);
}

/** The memories a document is a source of whose context (the text around their source) says `sentence`. */
export async function memoryContextsSaying(
  db: Db,
  documentId: string,
  sentence: string,
): Promise<{ rowid: number; context: string }[]> {
  return (await statement(
    db,
    `SELECT m.rowid, m.context FROM memories m
      WHERE m.context LIKE $1 ESCAPE '\\' AND (m.document_id = $2
        OR m.id IN (SELECT memory_id FROM memory_sources WHERE document_id = $3))`,
  ).all(containing(sentence), documentId, documentId)) as { rowid: number; context: string }[];
}

export async function setMemoryContext(db: Db, rowid: number, context: string): Promise<void> {
  await statement(db, "UPDATE memories SET context = $1 WHERE rowid = $2").run(context, rowid);
}

/** Chunks' current texts (those still stored), to embed again. */
export async function chunkContents(
  db: Db,
  rowids: readonly number[],
): Promise<{ rowid: number; content: string }[]> {
  const out: { rowid: number; content: string }[] = [];
  for (const rowid of rowids) {
    const row = (await statement(db, "SELECT rowid, content FROM chunks WHERE rowid = $1").get(rowid)) as
      | { rowid: number; content: string }
      | undefined;
    if (row) out.push(row);
  }
  return out;
}

export async function putChunkVector(db: Db, rowid: number, model: string, embedding: Float32Array) {
  await statement(
    db,
    `INSERT INTO chunk_vectors (chunk_rowid, model, embedding) VALUES ($1, $2, $3)
     ON CONFLICT (chunk_rowid) DO UPDATE SET model = excluded.model, embedding = excluded.embedding`,
  ).run(rowid, model, new Uint8Array(embedding.buffer, embedding.byteOffset, embedding.byteLength));
}

/**
 * Latest memories whose forget_after has passed and whose sentences are not recorded yet, oldest
 * expiry first: an expiry forgets without a write, so a sweep records them (memory/forget.ts).
 * Read through the partial index memories_live_forget_after: only memories with an expiry.
 */
export async function expiredUnrecorded(db: Db, at: string, limit: number): Promise<string[]> {
  return (
    (await statement(
      db,
      `SELECT m.id FROM memories m
        WHERE m.forget_after IS NOT NULL AND m.forget_after <= $1 AND m.is_forgotten = 0 AND m.is_latest = 1
          AND EXISTS (SELECT 1 FROM memory_sources s WHERE s.memory_id = m.id AND s.start_offset IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM forgotten_sentences f WHERE f.memory_id = m.id)
        ORDER BY m.forget_after LIMIT $2`,
    ).all(at, limit)) as { id: string }[]
  ).map((r) => r.id);
}

/** A memory's namespace, for the expiry sweep's per-namespace transactions. */
export async function memoryNamespace(db: Db, memoryId: string): Promise<string | undefined> {
  return (
    (await statement(db, "SELECT namespace_id FROM memories WHERE id = $1").get(memoryId)) as
      | { namespace_id: string }
      | undefined
  )?.namespace_id;
}

/** A document's resolved text (else its content); undefined for an unknown document. */
export async function documentText(db: Db, documentId: string): Promise<string | undefined> {
  const row = (await statement(db, "SELECT COALESCE(text, content) AS text FROM documents WHERE id = $1").get(
    documentId,
  )) as { text: string | null } | undefined;
  return row ? (row.text ?? "") : undefined;
}

/** A memory's text by id (the caller has already scoped the id to its namespace). */
export async function memoryText(db: Db, memoryId: string): Promise<string | undefined> {
  return (
    (await statement(db, "SELECT memory FROM memories WHERE id = $1").get(memoryId)) as
      | { memory: string }
      | undefined
  )?.memory;
}

/** The memories whose sentences were forgotten from a document. */
export async function forgottenMemoryIds(db: Db, documentId: string): Promise<string[]> {
  return (
    (await statement(db, "SELECT DISTINCT memory_id FROM forgotten_sentences WHERE document_id = $1").all(
      documentId,
    )) as { memory_id: string }[]
  ).map((r) => r.memory_id);
}
