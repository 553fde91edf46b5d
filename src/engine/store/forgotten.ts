import type { ForgetResponse } from "../../api/memories.js";
import { redactChunk, sentenceSaying, sentenceSpans, withoutSentences } from "../text/redact.js";
import type { Db } from "./connection.js";
import { namespaceTransaction, now, transaction } from "./db.js";
import {
  currentMemory,
  expiredMemory,
  findMemory,
  getMemoryRow,
  isForgotten,
  type MemoryRow,
  type MemorySelector,
  markForgotten,
} from "./memories.js";
import { relatedMemoryRows } from "./memory-relations.js";
import { memorySourceSpans } from "./search-hits.js";
import { statement } from "./statements.js";

/*
 * Forgotten sentences (table forgotten_sentences): a forgotten memory's source sentences, by
 * document, and the rows that must stop saying them (chunks, their vectors, memory contexts);
 * and the store's operations that forget (memory/forget.ts says what forgetting means and when).
 * Each operation is one transaction under the lock of the namespace whose memories it forgets.
 */

/** Most earlier versions one forget takes with it (a chain is a handful long). */
const MAX_EARLIER_VERSIONS = 1000;

/** What an operation that forgot memories answers, and the chunks it rewrote (to embed again). */
export interface Forgotten {
  response: ForgetResponse;
  rewritten: number[];
}

/**
 * Forgets memories of one namespace by exact id, with their earlier versions, and takes their
 * sentences out of their documents' chunks and contexts, in one transaction under the
 * namespace's lock. Unknown ids (or another namespace's) are reported; forgetting a forgotten
 * memory succeeds (it stays forgotten).
 */
export async function forgetMemories(
  db: Db,
  namespaceId: string | null,
  ids: readonly string[],
  reason: string,
): Promise<Forgotten> {
  if (namespaceId === null) {
    const errors = [...new Set(ids)].map((id) => ({ id, error: "memory not found" }));
    return { response: { count: 0, matches: [], errors }, rewritten: [] };
  }
  return await namespaceTransaction(db, namespaceId, () => forgetInTransaction(db, namespaceId, ids, reason));
}

/**
 * Forgets the one memory `selector` names (with its earlier versions), as forgetMemories does:
 * nothing when it names none, or one forgotten already (then that memory).
 */
export async function forgetSelectedMemory(
  db: Db,
  namespaceId: string | null,
  selector: MemorySelector,
  reason: string,
): Promise<{ forgotten: Forgotten; id: string } | { missing: true } | { alreadyForgotten: MemoryRow }> {
  if (namespaceId === null) return { missing: true };
  return await namespaceTransaction(db, namespaceId, async () => {
    const row = await findMemory(db, namespaceId, selector);
    if (!row) return { missing: true };
    if (isForgotten(row)) return { alreadyForgotten: row };
    return { forgotten: await forgetInTransaction(db, namespaceId, [row.id], reason), id: row.id };
  });
}

/**
 * Records an expired memory's sentences (its forget_after has passed) and those of the earlier
 * versions it forgets with it, under its namespace's lock: the chunks rewritten.
 */
export async function forgetExpiredMemory(db: Db, id: string): Promise<number[]> {
  const namespaceId = await memoryNamespace(db, id);
  if (!namespaceId) return [];
  return await namespaceTransaction(db, namespaceId, async () => {
    const row = await getMemoryRow(db, namespaceId, id);
    const earlier = row ? await forgetEarlierVersions(db, row, "expired") : [];
    return await forgetSentences(db, [id, ...earlier]);
  });
}

/** Puts chunks' new vectors (after a forget rewrote them), in one transaction. */
export async function putChunkVectors(
  db: Db,
  model: string,
  vectors: readonly { rowid: number; embedding: Float32Array }[],
): Promise<void> {
  if (vectors.length === 0) return;
  await transaction(db, async () => {
    for (const v of vectors) await putChunkVector(db, v.rowid, model, v.embedding);
  });
}

async function forgetInTransaction(
  db: Db,
  namespaceId: string,
  ids: readonly string[],
  reason: string,
): Promise<Forgotten> {
  const matches: ForgetResponse["matches"] = [];
  const errors: ForgetResponse["errors"] = [];
  // The matched memories and the earlier versions forgotten with them.
  const forgotten: string[] = [];
  for (const id of new Set(ids)) {
    const row = await getMemoryRow(db, namespaceId, id);
    if (!row) {
      errors.push({ id, error: "memory not found" });
      continue;
    }
    await markForgotten(db, row.id, reason);
    matches.push({ id: row.id, memory: row.memory });
    forgotten.push(row.id, ...(await forgetEarlierVersions(db, row, reason)));
  }
  const rewritten = await forgetSentences(db, forgotten);
  return { response: { count: matches.length, matches, errors }, rewritten };
}

/**
 * Forgetting a memory's latest version forgets the memory, every version of it: this forgets the
 * earlier versions still live and returns their ids (their sentences are the caller's to take
 * out). Left live, an older version would still recall the fact: its words find the memory in
 * search (search/versions.ts), its source sentence stays in its document's passages. Forgetting a
 * superseded version forgets that version alone: one value in the memory's history. Inside a
 * transaction.
 */
export async function forgetEarlierVersions(db: Db, row: MemoryRow, reason: string): Promise<string[]> {
  if (row.is_latest !== 1) return [];
  const earlier = await relatedMemoryRows(db, row, "parents", MAX_EARLIER_VERSIONS, new Date().toISOString());
  for (const e of earlier) await markForgotten(db, e.id, `${reason} (an earlier version of ${row.id})`);
  return earlier.map((e) => e.id);
}

/**
 * Records the source sentences of `memoryIds` and takes them out of their documents' chunks and
 * contexts; the rowids of chunks rewritten (their vectors dropped, to embed again). A memory
 * without a known source span (a model extracted it) loses the sentence that clearly says it
 * (text/redact.ts sentenceSaying), if one does. Inside a write transaction.
 */
export async function forgetSentences(db: Db, memoryIds: readonly string[]): Promise<number[]> {
  // Each document's text is read once, however many of its memories are forgotten.
  const texts = new Map<string, string>();
  const textOf = async (documentId: string) => {
    let text = texts.get(documentId);
    if (text === undefined) {
      text = (await documentText(db, documentId)) ?? "";
      texts.set(documentId, text);
    }
    return text;
  };
  // Every memory's sources in one read.
  const sources = await memorySourceSpans(db, memoryIds);
  for (const id of memoryIds) {
    const memory = (await memoryText(db, id)) ?? "";
    for (const src of sources.get(id) ?? []) {
      const text = await textOf(src.documentId);
      // Without a span (a model's memory), the sentence that says it, when one clearly does.
      const sentence =
        src.start === null || src.end === null
          ? sentenceSaying(text, memory)
          : text.slice(src.start, src.end).trim();
      if (sentence === null || !/[\p{L}\p{N}]/u.test(sentence)) continue;
      await addForgottenSentence(db, src.documentId, id, sentence);
    }
  }
  const rewritten: number[] = [];
  for (const [documentId, text] of texts) rewritten.push(...(await redactDocument(db, documentId, text)));
  return rewritten;
}

/**
 * Brings a document's stored chunks and contexts in line with its forgotten sentences: each
 * chunk is its span of the document's text without them (text/redact.ts redactChunk). The rowids
 * of chunks rewritten. Inside a write transaction.
 */
export async function redactDocument(db: Db, documentId: string, known?: string): Promise<number[]> {
  const sentences = await forgottenSentences(db, documentId);
  if (sentences.length === 0) return [];
  const text = known ?? (await documentText(db, documentId));
  if (text === undefined) return [];
  const spans = sentenceSpans(text, sentences);
  const rewritten: number[] = [];
  for (const c of await chunksForRedaction(db, documentId, spans, sentences)) {
    const redacted = redactChunk(
      text,
      {
        start: c.start_offset,
        end: c.end_offset,
        content: c.content,
        context: c.context,
        speaker: c.speaker,
      },
      spans,
      sentences,
    );
    if (redacted === null) await deleteChunk(db, c.rowid);
    else if (redacted.content !== c.content || redacted.context !== c.context) {
      await rewriteChunk(db, c.rowid, redacted.content, redacted.context);
      rewritten.push(c.rowid);
    }
  }
  const contexts = new Map<number, string>();
  for (const sentence of sentences)
    for (const m of await memoryContextsSaying(db, documentId, sentence)) contexts.set(m.rowid, m.context);
  for (const [rowid, old] of contexts) {
    const context = withoutSentences(old, sentences);
    if (context !== old) await setMemoryContext(db, rowid, context);
  }
  return rewritten;
}

/** A document's forgotten sentences as its memories are stored again. */
export interface ForgottenInDocument {
  /** Whether a fact drawn from `source` would say a forgotten sentence again. */
  holds(source: { start: number; end: number } | undefined): boolean;
  /** The forgotten memories drawn from it: they keep it as their source (and stay forgotten). */
  memoryIds: string[];
  any: boolean;
}

/** A document none of whose sentences was forgotten. */
export const NOTHING_FORGOTTEN: ForgottenInDocument = { holds: () => false, memoryIds: [], any: false };

/**
 * What a document processed again must not remember anew: its forgotten sentences, where its text
 * says them (`text`, the one its facts were drawn from; default its stored text).
 */
export async function forgottenInDocument(
  db: Db,
  documentId: string,
  text?: string,
): Promise<ForgottenInDocument> {
  const sentences = await forgottenSentences(db, documentId);
  if (sentences.length === 0) return NOTHING_FORGOTTEN;
  const spans = sentenceSpans(text ?? (await documentText(db, documentId)) ?? "", sentences);
  return {
    holds: (src) => src !== undefined && spans.some((s) => src.start < s.end && src.end > s.start),
    memoryIds: await forgottenMemoryIds(db, documentId),
    any: true,
  };
}

async function addForgottenSentence(
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
  const rows = await statement<{ sentence: string }>(
    db,
    "SELECT DISTINCT sentence FROM forgotten_sentences WHERE document_id = $1",
  ).all(documentId);
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
async function chunksForRedaction(
  db: Db,
  documentId: string,
  spans: readonly { start: number; end: number }[],
  sentences: readonly string[],
): Promise<ChunkForRedaction[]> {
  const columns = "rowid, start_offset, end_offset, content, context, speaker";
  const found = new Map<number, ChunkForRedaction>();
  const over = statement<ChunkForRedaction>(
    db,
    `SELECT ${columns} FROM chunks WHERE document_id = $1 AND start_offset < $2 AND end_offset > $3`,
  );
  for (const s of spans) {
    for (const r of await over.all(documentId, s.end, s.start)) found.set(r.rowid, r);
  }
  const around = statement<ChunkForRedaction>(
    db,
    `SELECT ${columns} FROM chunks WHERE document_id = $1 AND context LIKE $2 ESCAPE '\\'`,
  );
  for (const sentence of sentences) {
    for (const r of await around.all(documentId, containing(sentence))) found.set(r.rowid, r);
  }
  return [...found.values()];
}

/**
 * A chunk's content and context rewritten (the search index follows: the update re-indexes it);
 * its vector goes, as it was made from the old text.
 */
async function rewriteChunk(db: Db, rowid: number, content: string, context: string): Promise<void> {
  await statement(db, "UPDATE chunks SET content = $1, context = $2 WHERE rowid = $3").run(
    content,
    context,
    rowid,
  );
  await statement(db, "DELETE FROM chunk_vectors WHERE chunk_rowid = $1").run(rowid);
}

async function deleteChunk(db: Db, rowid: number): Promise<void> {
  await statement(db, "DELETE FROM chunks WHERE rowid = $1").run(rowid);
}

/** The memories a document is a source of whose context (the text around their source) says `sentence`. */
async function memoryContextsSaying(
  db: Db,
  documentId: string,
  sentence: string,
): Promise<{ rowid: number; context: string }[]> {
  return await statement<{ rowid: number; context: string }>(
    db,
    `SELECT m.rowid, m.context FROM memories m
      WHERE m.context LIKE $1 ESCAPE '\\' AND (m.document_id = $2
        OR m.id IN (SELECT memory_id FROM memory_sources WHERE document_id = $3))`,
  ).all(containing(sentence), documentId, documentId);
}

async function setMemoryContext(db: Db, rowid: number, context: string): Promise<void> {
  await statement(db, "UPDATE memories SET context = $1 WHERE rowid = $2").run(context, rowid);
}

/** Chunks' current texts (those still stored), to embed again. */
export async function chunkContents(
  db: Db,
  rowids: readonly number[],
): Promise<{ rowid: number; content: string }[]> {
  const out: { rowid: number; content: string }[] = [];
  for (const rowid of rowids) {
    const row = await statement<{ rowid: number; content: string }>(
      db,
      "SELECT rowid, content FROM chunks WHERE rowid = $1",
    ).get(rowid);
    if (row) out.push(row);
  }
  return out;
}

async function putChunkVector(db: Db, rowid: number, model: string, embedding: Float32Array) {
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
    await statement<{ id: string }>(
      db,
      `SELECT m.id FROM memories m
        WHERE ${currentMemory("m")} AND ${expiredMemory("m", "$1")}
          AND EXISTS (SELECT 1 FROM memory_sources s WHERE s.memory_id = m.id AND s.start_offset IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM forgotten_sentences f WHERE f.memory_id = m.id)
        ORDER BY m.forget_after LIMIT $2`,
    ).all(at, limit)
  ).map((r) => r.id);
}

/** A memory's namespace, for the expiry sweep's per-namespace transactions. */
async function memoryNamespace(db: Db, memoryId: string): Promise<string | undefined> {
  return (
    await statement<{ namespace_id: string }>(db, "SELECT namespace_id FROM memories WHERE id = $1").get(
      memoryId,
    )
  )?.namespace_id;
}

/** A document's resolved text (else its content); undefined for an unknown document. */
export async function documentText(db: Db, documentId: string): Promise<string | undefined> {
  const row = await statement<{ text: string | null }>(
    db,
    "SELECT COALESCE(text, content) AS text FROM documents WHERE id = $1",
  ).get(documentId);
  return row ? (row.text ?? "") : undefined;
}

/** A memory's text by id (the caller has already scoped the id to its namespace). */
async function memoryText(db: Db, memoryId: string): Promise<string | undefined> {
  return (await statement<{ memory: string }>(db, "SELECT memory FROM memories WHERE id = $1").get(memoryId))
    ?.memory;
}

/** The memories whose sentences were forgotten from a document. */
async function forgottenMemoryIds(db: Db, documentId: string): Promise<string[]> {
  return (
    await statement<{ memory_id: string }>(
      db,
      "SELECT DISTINCT memory_id FROM forgotten_sentences WHERE document_id = $1",
    ).all(documentId)
  ).map((r) => r.memory_id);
}
