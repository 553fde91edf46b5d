import type { z } from "zod";
import type { Metadata } from "../../api/common.js";
import { SEARCH_DEFAULTS, type SearchBody, type SearchHit, type SearchResponse } from "../../api/search.js";
import { type Embedder, embedsChunks } from "../models/embedder.js";
import type { Db } from "../store/connection.js";
import { forgottenSentences } from "../store/forgotten.js";
import { relatedMemoryRefs } from "../store/memory-relations.js";
import {
  type ChunkHitRow,
  documentCitationRow,
  type HitRows,
  hitRows,
  latestDocumentDate,
  type MemoryHitRow,
} from "../store/search-hits.js";
import { searchStatistics } from "../store/search-index.js";
import type { Corpus, Scope } from "../store/search-scope.js";
import { cosines } from "../store/vectors.js";
import { redactTitle } from "../text/redact.js";
import { type QueryTerm, queryTerms, STOP_WORDS } from "../text/terms.js";
import { dropRepeats } from "./dedup.js";
import { anchorQueries, endPointQueries, mergeBest } from "./endpoints.js";
import { expansionTerms } from "./expand.js";
import { fuseCorpus, type Scored, selectHits, vectorSimilarity } from "./fusion.js";
import { type LexicalResult, lexicalSearch } from "./lexical.js";
import { pendingHits } from "./pending.js";
import { namedPeople, OTHER_PERSON_FACTOR, weighTheUsers } from "./person.js";
import { type RerankItem, rerankAggregate, rerankOrder } from "./rerank.js";
import { rewriteQuery } from "./rewrite.js";
import { vectorSearch } from "./vector.js";
import { currentVersions, latestVersionRowids } from "./versions.js";
import { boostStatedTimes, boostWindow, questionWindow, type Window } from "./when.js";

/** What a search needs from the open engine. */
export interface SearchDeps {
  db: Db;
  embedder?: Embedder | null | undefined;
  /** Where a failed query embedding is reported (search then goes on lexically). */
  log?: ((message: string) => void) | undefined;
}

/** A validated search body (defaults not yet applied). */
export type SearchRequest = z.output<typeof SearchBody>;

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * Weight of chunk hits against memory hits in hybrid search (bench/locomo/RECIPE.md, step 6).
 * The recipe measured 0.35 over every extracted fact; the engine's memories are fewer (relation
 * detection merges repeats and retires updated facts), so its turn chunks carry more: LoCoMo hybrid
 * at 3000 characters 0.781 / 0.795 / 0.794 / 0.796 / 0.788 at 0.35 / 0.55 / 0.6 / 0.7 / 0.85.
 */
export const HYBRID_CHUNK_WEIGHT = 0.6;

/**
 * How much WordNet's expansions of a query count (times their own weight, expand.ts): first
 * recall (test/engine/search/first-recall.test.ts) 86.3% without them, 88.2% / 90.2% / 90.2% at
 * 0.3 / 0.5 / 1; LoCoMo hybrid at 3000 characters 0.801 without them, 0.800 / 0.793 at 0.5 / 1.
 */
export const EXPANSION_WEIGHT = 0.5;

/**
 * Searches one namespace: lexical (FTS5 BM25 over each unit's text and, weighed lower, the text
 * around it) and, with an embedder, vector candidates over chunks, memories or both, fused into
 * one similarity in [0, 1] (see fusion.ts), thresholded, optionally reranked, limited.
 * A query that names a speaker of the namespace ("Mel" for Melanie) also searches the full name,
 * and ranks what others said lower (person.ts). A memory answers with its latest version only, also
 * when an older version's words matched (versions.ts). Hybrid search drops hits that repeat what ranks
 * above them (dedup.ts). `namespaceId` null (a namespace never written) finds nothing.
 */
export async function search(
  deps: SearchDeps,
  namespaceId: string | null,
  req: SearchRequest,
  signal?: AbortSignal,
): Promise<SearchResponse> {
  const started = performance.now();
  const done = (results: SearchHit[]): SearchResponse => ({
    results,
    searchTime: round(performance.now() - started),
  });
  if (!namespaceId) return done([]);
  const { db } = deps;
  const mode = req.searchMode ?? SEARCH_DEFAULTS.searchMode;
  const limit = req.limit ?? SEARCH_DEFAULTS.limit;
  const threshold = req.threshold ?? SEARCH_DEFAULTS.threshold;
  const rerank = req.rerank ?? "none";
  const scope: Scope = {
    namespaceId,
    filter: req.filter,
    includeForgotten: req.include?.forgotten === true,
    now: new Date().toISOString(),
    includeSuperseded: true,
  };

  /** The corpora searched, fixed by the first query's statistics (see rank). */
  let corpora: Corpus[] | undefined;

  // Rerankers look at more candidates than they return.
  const pool = rerank === "none" ? limit : Math.min(100, rerank === "aggregate" ? limit * 5 : limit * 3);
  // With vectors, fusion reorders the two lists: each brings more than the pool.
  const embedder = deps.embedder ?? null;
  const want = embedder ? Math.max(2 * pool, 20) : pool;
  const similarity = (cosine: number) =>
    embedder?.similarity ? embedder.similarity(cosine) : vectorSimilarity(cosine);
  // rewriteQuery: the words that ask the memory go, the words that name what is asked stay.
  const asked = req.rewriteQuery === true ? rewriteQuery(req.query) : req.query;
  // Hybrid returns what both kinds say once (a memory and the turn it came from tell one thing).
  const dedup = mode === "hybrid";

  /**
   * One query's candidates over the corpora, fused, thresholded, weighed and window-boosted.
   * `withTerms` is given the query's terms as soon as they are known, with whether the namespace
   * holds documents not indexed yet (for a read that needs only them).
   */
  const rank = async (query: string, withTerms?: (terms: QueryTerm[], unindexed: boolean) => void) => {
    // The window asked about is read beside the ranking (its statement needs nothing of it).
    const asking = settled(askedWindow(db, namespaceId, query));
    // What the query means without saying it: WordNet's synonyms and kinds, weighed lower.
    const expand = (terms: QueryTerm[]) =>
      expansionTerms(terms).map((e) => ({ ...e, weight: EXPANSION_WEIGHT * e.weight }));
    // Both corpora's statistics and whether there are memories at all: one read for the query.
    const statisticsOf = (terms: QueryTerm[], expansions: ReturnType<typeof expand>) =>
      searchStatistics(db, namespaceId, [
        ...terms.flatMap((t) => t.stems),
        ...expansions.flatMap((e) => e.term.stems),
      ]);
    // The query's own terms' statistics are read beside the names it starts; a name it starts
    // (and does not spell whole) adds its words to the terms, whose statistics are read again.
    const own = queryTerms(query);
    const ownExpansions = expand(own);
    const [people, ownStatistics] = await Promise.all([
      namedPeople(db, namespaceId, query, STOP_WORDS),
      statisticsOf(own, ownExpansions),
    ]);
    const named = people.expansions.length > 0;
    const terms = named ? queryTerms([query, ...people.expansions].join(" ")) : own;
    withTerms?.(terms, ownStatistics.hasUnindexed);
    const expansions = named ? expand(terms) : ownExpansions;
    const person = people.names.size > 0 ? { names: people.names, factor: OTHER_PERSON_FACTOR } : undefined;
    const statistics = named ? await statisticsOf(terms, expansions) : ownStatistics;
    if (!corpora) {
      corpora = [];
      if (mode !== "memories") corpora.push("chunks");
      // Hybrid answers from chunks alone while the namespace has no memory yet.
      if (mode === "memories" || (mode === "hybrid" && statistics.hasMemories)) corpora.push("memories");
    }
    const queryVector = await embedQuery(deps, query, signal);

    // The corpora are ranked at once: on PostgreSQL each ranking statement runs on a connection of
    // its own, and at 100k memories they are most of a search's time.
    const chosen = corpora;
    const ranked = await Promise.all(
      chosen.map(async (corpus) => {
        const lex = await lexicalSearch(db, corpus, terms, scope, want, {
          threshold,
          person,
          expansions,
          statistics: statistics[corpus],
        });
        // Beside memories, chunks rank lower (see HYBRID_CHUNK_WEIGHT).
        const weight = corpus === "chunks" && chosen.includes("memories") ? HYBRID_CHUNK_WEIGHT : 1;
        const embedded =
          queryVector !== null && embedder !== null && (corpus === "memories" || embedsChunks(embedder));
        // A row found by its vector alone scores at most the similarity of a cosine of 1 (a text
        // with the very words of the query, which lexical search finds anyway): when that is not
        // above the threshold, only the lexical candidates need their cosine, read with their rows
        // below, not a namespace scan.
        const candidatesOnly = embedded && Math.sqrt(weight) * similarity(1) <= threshold;
        const vec =
          embedded && !candidatesOnly
            ? await vectorSearch(db, corpus, queryVector!, embedder!.model, scope, want)
            : [];
        return { corpus, lex, weight, vec, candidatesOnly };
      }),
    );
    // The lexical candidates' rows, read at once (most are hits), with the vectors of those whose
    // cosine is all that vector search adds: a statement for both corpora.
    const candidateIds = (corpus: Corpus) =>
      ranked.find((r) => r.corpus === corpus)?.lex.candidates.map((c) => c.rowid) ?? [];
    const scoredByVector = ranked.filter((r) => r.candidatesOnly).map((r) => r.corpus);
    const candidates = await hitRows(
      db,
      candidateIds("chunks"),
      candidateIds("memories"),
      scoredByVector.length > 0 ? { model: embedder!.model, of: scoredByVector } : undefined,
    );
    const lexical = new Map<Corpus, LexicalResult>(ranked.map((r) => [r.corpus, r.lex]));
    const lists: Scored[][] = ranked.map((r) =>
      fuseCorpus(
        r.corpus,
        r.lex,
        r.candidatesOnly ? cosines(queryVector!, candidates.vectors[r.corpus]) : r.vec,
        r.weight,
        similarity,
      ),
    );
    // A superseded version found by its own words answers as the memory's latest version.
    const items = await currentVersions(
      await hydrate(db, selectHits(lists, threshold, Number.POSITIVE_INFINITY), candidates),
      threshold,
      {
        superseded: (i) =>
          i.corpus === "memories" && (i.row as MemoryHitRow).is_latest !== 1
            ? (i.row as MemoryHitRow).id
            : null,
        latest: (ids) => latestVersionRowids(db, scope, ids),
        load: (scored) => hydrate(db, scored),
      },
    );
    // A question about a time ("in August 2023", "last spring") ranks what happened then higher.
    const window = await asking;
    // A question about the user answers with the user's own facts before other people's.
    const theirs = weighTheUsers(items, query, (i) => {
      if (i.corpus !== "memories") return null;
      const row = i.row as MemoryHitRow;
      return { whose: row.subject_kind, slot: row.attribute };
    });
    return { items: boostStatedTimes(boostWindow(theirs, window), query), terms, lexical, window };
  };

  // What was just added and is not indexed yet is matched in its stored text (pending.ts), read
  // beside the ranking once the query's terms are known, when the namespace has any.
  let pendingRead: Promise<SearchHit[]> | undefined;
  const main = await rank(asked, (terms, unindexed) => {
    if (mode !== "memories" && unindexed) pendingRead = settled(pendingHits(db, scope, terms, threshold));
  });
  const { terms, lexical } = main;
  let items = main.items;
  // "How long between X and Y": each end point searched alone as well, so both come back.
  for (const sub of endPointQueries(asked)) items = mergeBest(items, (await rank(sub)).items);
  // "What did Zoe do between the trip and the wedding?": each event searched alone dates the span,
  // and what happened inside it ranks higher (a question that names dates has its window already).
  const anchors = main.window === null ? anchorQueries(asked) : [];
  if (anchors.length === 2) {
    const ends: string[] = [];
    for (const anchor of anchors) {
      const found = (await rank(anchor)).items;
      // The event is its best memory, when that one is dated and relevant in its own right (a
      // memory that only shares the person's name dates nothing).
      const event = found.find((i) => i.corpus === "memories");
      if (event?.date && event.scored.similarity >= SEARCH_DEFAULTS.threshold)
        ends.push(event.date.slice(0, 10));
      items = mergeBest(items, found);
    }
    if (ends.length === 2) {
      const [from, to] = ends.sort() as [string, string];
      items = boostWindow(items, { from, to });
    }
  }
  items = (dedup ? dropRepeats(items) : items).slice(0, pool);
  if (rerank === "order") {
    items = rerankOrder(items, terms, (i) => lexical.get(i.scored.corpus)?.termIdf ?? []);
  } else if (rerank === "aggregate") {
    items = rerankAggregate(items);
  }
  items = items.slice(0, limit);
  const sources = dedup ? sourceChunkIds(items as Item[]) : new Map<Item, string[]>();
  const hits: SearchHit[] = [];
  for (const item of items) {
    const hit = await toHit(db, item, namespaceId, req);
    const chunkIds = sources.get(item as Item);
    hits.push(chunkIds ? { ...hit, sourceChunkIds: chunkIds } : hit);
  }
  if (mode === "memories" || !pendingRead) return done(hits);
  const pending = (await pendingRead).filter(
    (p) => !hits.some((h) => h.documentId === p.documentId && h.chunk?.includes(p.chunk ?? "")),
  );
  if (pending.length === 0) return done(hits);
  for (const p of pending) {
    if (!req.include?.documents) continue;
    const doc = await documentSummary(db, p.documentId!);
    if (doc) p.included = { document: doc };
  }
  // Each goes before the first hit it outscores; the ranked hits keep their order (a reranker's too).
  const merged: SearchHit[] = [];
  let next = 0;
  for (const hit of hits) {
    while (next < pending.length && pending[next]!.similarity > hit.similarity) merged.push(pending[next++]!);
    merged.push(hit);
  }
  return done([...merged, ...pending.slice(next)].slice(0, limit));
}

/**
 * The window the query asks about, relative to the namespace's latest document date (a store of
 * last year's conversations answers "last spring" about that year), or to now without one.
 */
async function askedWindow(db: Db, namespaceId: string, query: string): Promise<Window | null> {
  if ((await questionWindow(query, new Date())) === null) return null;
  const latest = await latestDocumentDate(db, namespaceId);
  const ref = latest ? new Date(latest) : new Date();
  return await questionWindow(query, Number.isNaN(ref.getTime()) ? new Date() : ref);
}

async function embedQuery(
  deps: SearchDeps,
  query: string,
  signal?: AbortSignal,
): Promise<Float32Array | null> {
  if (!deps.embedder) return null;
  try {
    const [v] = await deps.embedder.embed([query], signal);
    return v ?? null;
  } catch (err) {
    if (signal?.aborted) throw err;
    deps.log?.(`search: query embedding failed, searching lexically: ${(err as Error).message}`);
    return null;
  }
}

/** A hit candidate with its row (and what dedup reads). */
type Item = RerankItem & {
  row: ChunkHitRow | MemoryHitRow;
  corpus: Corpus;
  /** When it happened: a memory's event date (null for chunks). */
  date: string | null;
  start?: number;
  end?: number;
  sources?: { documentId: string; start: number | null }[];
};

/**
 * For each memory among the hits, the chunk hits whose span holds one of its source sentences:
 * a memory and the passage it came from tell one thing, and a reader may show them as one result
 * (the MCP search tool does). Ranking is left as it is: the passage stays a hit of its own.
 */
function sourceChunkIds(items: readonly Item[]): Map<Item, string[]> {
  const chunks = items.filter((i) => i.corpus === "chunks");
  const out = new Map<Item, string[]>();
  if (chunks.length === 0) return out;
  for (const item of items) {
    if (item.corpus !== "memories" || !item.sources?.length) continue;
    const ids = chunks
      .filter((c) =>
        item.sources!.some(
          (s) =>
            s.start !== null &&
            s.documentId === c.documentId &&
            c.start !== undefined &&
            c.end !== undefined &&
            c.start <= s.start &&
            s.start < c.end,
        ),
      )
      .map((c) => (c.row as ChunkHitRow).id);
    if (ids.length > 0) out.set(item, ids);
  }
  return out;
}

/**
 * Loads the rows of the selected candidates, in the candidates' order: those `known` has from
 * it, the others read.
 */
async function hydrate(
  db: Db,
  selected: readonly Scored[],
  known?: Pick<HitRows, "chunks" | "memories">,
): Promise<Item[]> {
  const has = {
    chunks: new Set(known?.chunks.map((r) => r.rowid)),
    memories: new Set(known?.memories.map((r) => r.rowid)),
  };
  const missing = (corpus: Corpus) =>
    selected.filter((s) => s.corpus === corpus && !has[corpus].has(s.rowid)).map((s) => s.rowid);
  const read = await hitRows(db, missing("chunks"), missing("memories"));
  const rows = {
    chunks: [...(known?.chunks ?? []), ...read.chunks],
    memories: [...(known?.memories ?? []), ...read.memories],
  };
  const chunks = new Map(rows.chunks.map((r) => [r.rowid, r]));
  const memories = new Map(rows.memories.map((r) => [r.rowid, r]));
  const items: Item[] = [];
  for (const scored of selected) {
    if (scored.corpus === "chunks") {
      const row = chunks.get(scored.rowid);
      if (row)
        items.push({
          scored,
          row,
          corpus: "chunks",
          // A conversation's day is not the day of what it tells ("last Sunday"): chunks are not dated.
          date: null,
          text: row.text,
          documentId: row.document_id,
          position: row.position,
          start: row.start_offset,
          end: row.end_offset,
        });
    } else {
      const row = memories.get(scored.rowid);
      if (row)
        items.push({
          scored,
          row,
          corpus: "memories",
          date: row.event_date,
          text: row.memory,
          documentId: row.document_id,
          sources: row.sources,
        });
    }
  }
  return items;
}

const parseMetadata = (text: string): Metadata => {
  try {
    return JSON.parse(text) as Metadata;
  } catch {
    return {};
  }
};

async function toHit(db: Db, item: RerankItem, namespaceId: string, req: SearchRequest): Promise<SearchHit> {
  const { row } = item as Item;
  const similarity = Math.min(1, Math.max(0, item.scored.similarity));
  const included: NonNullable<SearchHit["included"]> = {};
  if (item.scored.corpus === "chunks") {
    const c = row as ChunkHitRow;
    if (req.include?.documents) {
      const doc = await documentSummary(db, c.document_id);
      if (doc) included.document = doc;
    }
    return {
      id: c.id,
      chunk: item.text,
      documentId: c.document_id,
      similarity,
      metadata: parseMetadata(c.metadata),
      system: { createdAt: c.created_at, updatedAt: c.created_at },
      ...(Object.keys(included).length > 0 ? { included } : {}),
    };
  }
  const m = row as MemoryHitRow;
  if (req.include?.documents && m.document_id) {
    const doc = await documentSummary(db, m.document_id);
    if (doc) included.document = doc;
  }
  if (req.include?.related) included.related = await relatedMemoryRefs(db, namespaceId, m.id);
  return {
    id: m.id,
    memory: m.memory,
    documentId: m.document_id,
    similarity,
    metadata: parseMetadata(m.metadata),
    isLatest: m.is_latest === 1,
    isInference: m.is_inference === 1,
    system: { createdAt: m.created_at, updatedAt: m.updated_at },
    ...(Object.keys(included).length > 0 ? { included } : {}),
  };
}

/** `included.document`: what a reader needs to cite the source. */
async function documentSummary(db: Db, documentId: string): Promise<Record<string, unknown> | undefined> {
  const d = await documentCitationRow(db, documentId);
  if (!d) return undefined;
  // A title made from a forgotten sentence (a text's first line) does not recall it (memory/forget.ts);
  // the sentences are read only for a document that has any.
  const forgotten = d.title && Number(d.has_forgotten) ? await forgottenSentences(db, documentId) : [];
  return {
    id: d.id,
    customId: d.custom_id,
    title: forgotten.length > 0 && d.title ? redactTitle(d.title, forgotten) : d.title,
    type: d.type,
    url: d.url,
    source: d.source,
    metadata: parseMetadata(d.metadata),
    date: d.document_date,
  };
}

/**
 * A read started ahead of where its answer is needed: its failure is the request's when awaited
 * there, and no unhandled rejection meanwhile (a request that fails before it gets there drops it).
 */
function settled<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}
