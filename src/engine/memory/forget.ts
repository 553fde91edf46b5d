import type { ForgetResponse } from "../../api/memories.js";
import { ConflictError } from "../errors.js";
import { type Embedder, embedsChunks } from "../models/embedder.js";
import { search } from "../search/search.js";
import { type Db, namespaceTransaction, newId, transaction } from "../store/db.js";
import {
  addForgottenSentence,
  chunkContents,
  chunksForRedaction,
  deleteChunk,
  documentText,
  expiredUnrecorded,
  forgottenMemoryIds,
  forgottenSentences,
  memoryContextsSaying,
  memoryNamespace,
  memoryText,
  putChunkVector,
  rewriteChunk,
  setMemoryContext,
} from "../store/forgotten.js";
import { getMemoryRow, isForgotten, type MemoryRow, markForgotten } from "../store/memories.js";
import { relatedMemoryRows } from "../store/memory-relations.js";
import { memorySourceSpans } from "../store/search-hits.js";
import {
  redactPassage,
  saysNothing,
  sentenceSaying,
  sentenceSpans,
  withoutSentences,
} from "../text/redact.js";
import { queryTerms, stemTexts } from "../text/terms.js";
import { type MemorySelector, selectMemory } from "./read.js";

/**
 * Forget means gone from recall. Forgetting a memory (by id, by meaning, v4 DELETE or
 * forget-matching, or its `forget_after` passing) hides it from lists, search and the profile; a
 * direct read still answers it with `isForgotten: true`. Its source sentences are recorded against
 * their documents (forgotten_sentences), and every chunk of those documents loses them: the chunk
 * is re-indexed and embedded again without them, and shown without them; a chunk left with nothing
 * to say goes. The contexts around chunks and memories (indexed at a lower weight) lose them too.
 * The rest of each chunk stays findable, and the document's own text stays as stored: deleting it
 * is the document's delete. A document processed again (re-sent with the same id) keeps its
 * forgotten sentences out of its new chunks and contexts, and no new memory is drawn from them
 * (dreamer.ts commitFacts): what the user forgot stays forgotten, whatever the extractor now makes
 * of the sentence; the forgotten memory keeps the document as its source.
 * A memory without a known source span (a model extracted it) loses the sentence that clearly says
 * it (text/redact.ts sentenceSaying), if one does; one written directly has no source to take out.
 */

export interface ForgetDeps {
  db: Db;
  /** Embeds the chunks that lost a sentence again (when it embeds chunks). */
  embedder?: Embedder | null | undefined;
  log?: ((message: string) => void) | undefined;
}

/**
 * Records the source sentences of `memoryIds` and takes them out of their documents' chunks and
 * contexts; the rowids of chunks rewritten (their vectors dropped, to embed again). Call inside a
 * write transaction.
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
 * chunk is its span of the document's text without them. The rowids of chunks rewritten.
 */
export async function redactDocument(db: Db, documentId: string, known?: string): Promise<number[]> {
  const sentences = await forgottenSentences(db, documentId);
  if (sentences.length === 0) return [];
  const text = known ?? (await documentText(db, documentId));
  if (text === undefined) return [];
  const spans = sentenceSpans(text, sentences);
  const rewritten: number[] = [];
  for (const c of await chunksForRedaction(db, documentId, spans, sentences)) {
    // From the document's text, not the stored content: a chunk already redacted loses the new
    // sentence too, also where a chunk boundary cuts it.
    const whole = c.end_offset <= text.length ? text.slice(c.start_offset, c.end_offset) : c.content;
    const content = redactPassage(
      text,
      { start: c.start_offset, end: c.end_offset, content: whole },
      spans,
      sentences,
    );
    const context = withoutSentences(c.context, sentences);
    if (saysNothing(content, c.speaker)) await deleteChunk(db, c.rowid);
    else if (content !== c.content || context !== c.context) {
      await rewriteChunk(db, c.rowid, content, context);
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

/** A document's forgotten sentences as its memories are stored again (see commitFacts). */
export interface ForgottenInDocument {
  /** Whether a fact drawn from `source` would say a forgotten sentence again. */
  holds(source: { start: number; end: number } | undefined): boolean;
  /** The forgotten memories drawn from it: they keep it as their source (and stay forgotten). */
  memoryIds: string[];
  any: boolean;
}

/**
 * What a document processed again must not remember anew: its forgotten sentences, where its
 * current text says them. Call inside the transaction that stores its memories.
 */
export async function forgottenInDocument(db: Db, documentId: string): Promise<ForgottenInDocument> {
  const sentences = await forgottenSentences(db, documentId);
  if (sentences.length === 0) return { holds: () => false, memoryIds: [], any: false };
  const spans = sentenceSpans((await documentText(db, documentId)) ?? "", sentences);
  return {
    holds: (src) => src !== undefined && spans.some((s) => src.start < s.end && src.end > s.start),
    memoryIds: await forgottenMemoryIds(db, documentId),
    any: true,
  };
}

/**
 * Embeds rewritten chunks again, after the forget committed (a model call never holds the write
 * lock). Without a chunk embedder, or when it fails, they stay without a vector: found lexically.
 */
export async function reembedChunks(deps: ForgetDeps, rowids: readonly number[]): Promise<void> {
  const embedder = deps.embedder;
  if (!embedsChunks(embedder) || rowids.length === 0) return;
  try {
    const chunks = await chunkContents(deps.db, rowids);
    const vectors = await embedder.embed(chunks.map((c) => c.content));
    await transaction(deps.db, async () => {
      for (const [i, c] of chunks.entries()) {
        const v = vectors[i];
        if (v) await putChunkVector(deps.db, c.rowid, embedder.model, v);
      }
    });
  } catch (err) {
    deps.log?.(`embedding chunks after a forget failed, they are found lexically: ${String(err)}`);
  }
}

/** Memories whose expiry the sweep records per run. */
export const EXPIRY_SWEEP_BATCH = 100;

/**
 * A memory past its `forget_after` is forgotten at that moment, without a write: this sweep (run
 * by the processing workers every EXPIRY_SWEEP_MS) records its sentences and takes them out of
 * the chunks, as an explicit forget does. How many memories it recorded.
 */
export async function sweepExpired(deps: ForgetDeps, at = new Date().toISOString()): Promise<number> {
  const ids = await expiredUnrecorded(deps.db, at, EXPIRY_SWEEP_BATCH);
  const rewritten: number[] = [];
  for (const id of ids) {
    const namespaceId = await memoryNamespace(deps.db, id);
    if (!namespaceId) continue;
    rewritten.push(
      ...(await namespaceTransaction(deps.db, namespaceId, async () => {
        // An expired memory is forgotten, and with it what it replaced (forgetEarlierVersions).
        const row = await getMemoryRow(deps.db, namespaceId, id);
        const earlier = row ? await forgetEarlierVersions(deps.db, row, "expired") : [];
        return await forgetSentences(deps.db, [id, ...earlier]);
      })),
    );
  }
  await reembedChunks(deps, rewritten);
  return ids.length;
}

/** How often the workers record expired memories' sentences (see sweepExpired). */
export const EXPIRY_SWEEP_MS = 30_000;

/** Most memories one forget-by-meaning matches. */
export const FORGET_SEMANTIC_LIMIT = 100;
/**
 * Similarity (search's fused score in [0, 1]) a memory needs to be forgotten by meaning. Stricter
 * than search's default 0.3 because forgetting is destructive: lexically, a memory must hold about
 * half of the query's information (its idf mass: tanh⁻¹ 0.45 ≈ 0.48, see search/fusion.ts).
 */
export const FORGET_SEMANTIC_THRESHOLD = 0.45;
/**
 * Share of the query's informative terms a memory's own text must hold. Search also weighs the
 * text around a memory (its source turns), which is right for finding but not for forgetting:
 * "forget dark roast coffee" must not forget "She lives in Berlin" because coffee came up nearby.
 */
export const FORGET_OWN_TEXT_SHARE = 0.5;

/** Whether the memory's own words hold at least FORGET_OWN_TEXT_SHARE of the query's terms. */
export function matchesOwnText(query: string, memory: string): boolean {
  const terms = queryTerms(query);
  if (terms.length === 0) return false;
  const own = new Set(stemTexts([memory])[0] ?? []);
  const held = terms.filter((t) => t.stems.length > 0 && t.stems.every((s) => own.has(s))).length;
  return held > 0 && held / terms.length >= FORGET_OWN_TEXT_SHARE;
}

/** Most earlier versions one forget takes with it (a chain is a handful long). */
const MAX_EARLIER_VERSIONS = 1000;

/**
 * Forgetting a memory's latest version forgets the memory, every version of it: this forgets the
 * earlier versions still live and returns their ids (their sentences are the caller's to take
 * out). Left live, an older version would still recall the fact: its words find the memory in
 * search (search/versions.ts), its source sentence stays in its document's passages. Forgetting a
 * superseded version forgets that version alone: one value in the memory's history.
 */
export async function forgetEarlierVersions(db: Db, row: MemoryRow, reason: string): Promise<string[]> {
  if (row.is_latest !== 1) return [];
  const earlier = await relatedMemoryRows(db, row, "parents", MAX_EARLIER_VERSIONS, new Date().toISOString());
  for (const e of earlier) await markForgotten(db, e.id, `${reason} (an earlier version of ${row.id})`);
  return earlier.map((e) => e.id);
}

/**
 * Forgets memories of one namespace by exact id, inside the caller's write transaction: marks
 * them and their earlier versions and takes their sentences out of the chunks (see the top of this
 * file); `matches` are the memories named. Unknown ids (or
 * another namespace's) are reported. The rewritten chunks' rowids come back to embed again.
 */
export async function forgetByIdsInTransaction(
  db: Db,
  namespaceId: string | null,
  ids: readonly string[],
  reason = "forgotten by id",
): Promise<{ response: ForgetResponse; rewritten: number[] }> {
  const matches: ForgetResponse["matches"] = [];
  const errors: ForgetResponse["errors"] = [];
  // The matched memories and the earlier versions forgotten with them.
  const forgotten: string[] = [];
  for (const id of new Set(ids)) {
    const row = namespaceId ? await getMemoryRow(db, namespaceId, id) : undefined;
    if (!row) {
      errors.push({ id, error: "memory not found" });
      continue;
    }
    // Forgetting a forgotten memory is a success: it stays forgotten.
    await markForgotten(db, row.id, reason);
    matches.push({ id: row.id, memory: row.memory });
    forgotten.push(row.id, ...(await forgetEarlierVersions(db, row, reason)));
  }
  const rewritten = await forgetSentences(db, forgotten);
  return { response: { count: matches.length, matches, errors }, rewritten };
}

/** Forgets memories of one namespace by exact id (see forgetByIdsInTransaction), then re-embeds. */
export async function forgetByIds(
  deps: ForgetDeps,
  namespaceId: string | null,
  ids: readonly string[],
  reason = "forgotten by id",
): Promise<ForgetResponse> {
  const run = () => forgetByIdsInTransaction(deps.db, namespaceId, ids, reason);
  const { response, rewritten } = namespaceId
    ? await namespaceTransaction(deps.db, namespaceId, run)
    : await transaction(deps.db, run);
  await reembedChunks(deps, rewritten);
  return response;
}

/**
 * Forgets the one memory a selector names (404 when none; 409 when it is forgotten already),
 * with its earlier versions, then re-embeds the rewritten chunks; answers its id.
 */
export async function forgetSelected(
  deps: ForgetDeps,
  namespaceId: string | null,
  selector: MemorySelector,
  reason: string,
): Promise<string> {
  const { id, rewritten } = await transaction(deps.db, async () => {
    const row = await selectMemory(deps.db, namespaceId, selector);
    if (isForgotten(row))
      throw new ConflictError("Memory already forgotten", `memory ${row.id} is already forgotten`);
    const done = await forgetByIdsInTransaction(deps.db, row.namespace_id, [row.id], reason);
    return { id: row.id, rewritten: done.rewritten };
  });
  await reembedChunks(deps, rewritten);
  return id;
}

/** Names one legacy forget-matching request in its answer and in the reason its memories record. */
export const newForgetBatchId = () => newId("fgb");

/** How a forget by meaning may be tuned (legacy forget-matching sets them; v5 uses the defaults). */
export interface ForgetByMeaningOptions {
  /** Default FORGET_SEMANTIC_THRESHOLD. */
  threshold?: number | undefined;
  /** Most memories matched; default FORGET_SEMANTIC_LIMIT. */
  limit?: number | undefined;
  /** Recorded as each forgotten memory's forgetReason; default names the query. */
  reason?: string | undefined;
}

/**
 * Forgets the namespace's live, latest memories that match `query` by meaning: the search
 * service's own scoring (lexical, plus vectors when an embedder is configured) over memories, at
 * FORGET_SEMANTIC_THRESHOLD. A dry run returns the matches, forgets nothing and counts 0.
 */
export async function forgetByMeaning(
  deps: ForgetDeps,
  namespaceId: string | null,
  query: string,
  dryRun: boolean,
  signal?: AbortSignal,
  opts: ForgetByMeaningOptions = {},
): Promise<ForgetResponse> {
  const found = await search(
    deps,
    namespaceId,
    {
      query,
      searchMode: "memories",
      limit: opts.limit ?? FORGET_SEMANTIC_LIMIT,
      threshold: opts.threshold ?? FORGET_SEMANTIC_THRESHOLD,
    },
    signal,
  );
  // Only current versions, and only on the memory's own words (see FORGET_OWN_TEXT_SHARE).
  const matches = found.results
    .filter((h): h is typeof h & { memory: string } => typeof h.memory === "string" && h.isLatest !== false)
    .filter((h) => matchesOwnText(query, h.memory))
    .map((h) => ({ id: h.id, memory: h.memory }));
  if (dryRun || !namespaceId || matches.length === 0) return { count: 0, matches, errors: [] };
  return await forgetByIds(
    deps,
    namespaceId,
    matches.map((m) => m.id),
    opts.reason ?? `forgotten by meaning: ${query}`,
  );
}
