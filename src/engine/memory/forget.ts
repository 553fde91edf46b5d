import type { ForgetResponse } from "../../api/memories.js";
import { ConflictError, NotFoundError } from "../errors.js";
import { type Embedder, embedsChunks } from "../models/embedder.js";
import { search } from "../search/search.js";
import { type Db, newId } from "../store/db.js";
import {
  chunkContents,
  expiredUnrecorded,
  forgetExpiredMemory,
  forgetMemories,
  forgetSelectedMemory,
  putChunkVectors,
} from "../store/forgotten.js";
import { queryTerms, stemTexts } from "../text/terms.js";
import type { MemorySelector } from "./read.js";

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
 * Embeds rewritten chunks again, after the forget committed (a model call never holds the write
 * lock). Without a chunk embedder, or when it fails, they stay without a vector: found lexically.
 */
export async function reembedChunks(deps: ForgetDeps, rowids: readonly number[]): Promise<void> {
  const embedder = deps.embedder;
  if (!embedsChunks(embedder) || rowids.length === 0) return;
  try {
    const chunks = await chunkContents(deps.db, rowids);
    const vectors = await embedder.embed(chunks.map((c) => c.content));
    await putChunkVectors(
      deps.db,
      embedder.model,
      chunks.flatMap((c, i) => (vectors[i] ? [{ rowid: c.rowid, embedding: vectors[i] }] : [])),
    );
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
  // An expired memory is forgotten, and with it what it replaced (its earlier versions).
  for (const id of ids) rewritten.push(...(await forgetExpiredMemory(deps.db, id)));
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

/**
 * Forgets memories of one namespace by exact id, with their earlier versions, and takes their
 * sentences out of the chunks (see the top of this file; store/forgotten.ts forgetMemories), then
 * embeds the rewritten chunks again. Unknown ids (or another namespace's) are reported.
 */
export async function forgetByIds(
  deps: ForgetDeps,
  namespaceId: string | null,
  ids: readonly string[],
  reason = "forgotten by id",
): Promise<ForgetResponse> {
  const { response, rewritten } = await forgetMemories(deps.db, namespaceId, ids, reason);
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
  const done = await forgetSelectedMemory(deps.db, namespaceId, selector, reason);
  if ("missing" in done) throw new NotFoundError("Memory");
  if ("alreadyForgotten" in done) {
    const { id } = done.alreadyForgotten;
    throw new ConflictError("Memory already forgotten", `memory ${id} is already forgotten`);
  }
  await reembedChunks(deps, done.forgotten.rewritten);
  return done.id;
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
