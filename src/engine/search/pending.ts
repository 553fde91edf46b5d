import type { Metadata } from "../../api/common.js";
import type { SearchHit } from "../../api/search.js";
import { isUrlContent } from "../ingest/content.js";
import type { Db } from "../store/connection.js";
import { forgottenSentences } from "../store/forgotten.js";
import { type Scope, unindexedDocuments } from "../store/search-scope.js";
import { sentenceSpans } from "../text/redact.js";
import { type QueryTerm, stemWords, termFrequency } from "../text/terms.js";

/**
 * Documents added but not indexed yet have no chunk and no memory: an agent that asks right after
 * telling something would find nothing. Their stored text is matched here as it is, a sentence
 * (or a conversation turn) at a time, by the share of the query's terms it holds. Only the few most
 * recent ones are read, each up to a bound, so that a backlog costs a search little: the rest are
 * counted on the namespace record (`processing`), and searched once processed.
 */

/** Documents not indexed yet that one search reads. */
export const PENDING_DOCUMENTS_MAX = 20;
/** Characters of each that it reads. */
export const PENDING_CHARS_MAX = 100_000;
/** Passages of one document a search returns at most: the best few, not the document. */
const PASSAGES_PER_DOCUMENT = 3;
/**
 * A passage holding every term of the query scores this: under a strong indexed hit, whose text
 * was weighed by the namespace's statistics and its meaning, as a chunk beside memories is.
 */
export const PENDING_WEIGHT = 0.8;

/** Sentence ends and line breaks: a note's sentence or a transcript's turn. */
const PASSAGE_END = /(?<=[.!?])\s+(?=\S)|\n+/g;

function passages(text: string): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let start = 0;
  for (const m of text.matchAll(PASSAGE_END)) {
    if (m.index > start) out.push({ start, end: m.index });
    start = m.index + m[0].length;
  }
  if (start < text.length) out.push({ start, end: text.length });
  return out;
}

/**
 * The scope's passages of documents not indexed yet that hold the query's terms, as chunk hits
 * marked `pending` (their id: the document's id and the passage's offset), best first, those under
 * `threshold` left out.
 */
export async function pendingHits(
  db: Db,
  scope: Scope,
  terms: readonly QueryTerm[],
  threshold: number,
): Promise<SearchHit[]> {
  if (terms.length === 0) return [];
  const docs = await unindexedDocuments(db, scope, PENDING_DOCUMENTS_MAX, PENDING_CHARS_MAX);
  const hits: SearchHit[] = [];
  for (const doc of docs) {
    // A URL to fetch says nothing yet; an upload's text is not read yet (its content is empty).
    if (isUrlContent(doc.content)) continue;
    // A forgotten sentence is not recalled from the document it is still stored in (memory/forget.ts).
    const forgotten = Number(doc.has_forgotten)
      ? sentenceSpans(doc.content, await forgottenSentences(db, doc.id))
      : [];
    // All of it: while a document is processed again (an appended turn), its earlier chunks are
    // out of search too (only a `done` document's chunks are searched).
    const spans = passages(doc.content).filter(
      (s) => !forgotten.some((f) => f.start < s.end && s.start < f.end),
    );
    const stems = stemWords(
      spans.map((s) => doc.content.slice(s.start, s.end)),
      terms,
    );
    const scored = spans
      .map((span, i) => ({
        span,
        share: terms.filter((t) => termFrequency(stems[i] ?? [], t) > 0).length / terms.length,
      }))
      .filter((p) => p.share * PENDING_WEIGHT >= threshold && p.share > 0)
      .sort((a, b) => b.share - a.share)
      .slice(0, PASSAGES_PER_DOCUMENT);
    let metadata: Metadata = {};
    try {
      metadata = JSON.parse(doc.metadata) as Metadata;
    } catch {}
    for (const { span, share } of scored) {
      hits.push({
        id: `${doc.id}#${span.start}`,
        chunk: doc.content.slice(span.start, span.end).trim(),
        documentId: doc.id,
        similarity: Math.round(share * PENDING_WEIGHT * 1e6) / 1e6,
        metadata,
        pending: true,
        system: { createdAt: doc.updated_at, updatedAt: doc.updated_at },
      });
    }
  }
  return hits.sort((a, b) => b.similarity - a.similarity);
}
