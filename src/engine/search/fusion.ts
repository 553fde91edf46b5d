import type { Corpus } from "../store/search-scope.js";
import type { LexicalResult } from "./lexical.js";
import type { VectorCandidate } from "./vector.js";

/** A candidate of one corpus with its fused similarity in [0, 1]. */
export interface Scored {
  corpus: Corpus;
  rowid: number;
  similarity: number;
  /** The parts, for the reranker and for debugging. */
  lexical: number;
  vector: number;
}

/**
 * Lexical similarity: the geometric mean of how well the namespace answers the query (absolute,
 * from the best row) and of each row's share of the best score (relative):
 *
 *   coverage(best) = bm25(best) / Σ_t idf(t)
 *   similarity(row) = sqrt(tanh(coverage(best)) · weight · bm25(row) / bm25(best))
 *
 * FTS5's BM25 is Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)); for a row of average
 * length holding a term once, the term's part is exactly idf(t). So Σ idf is the score of an
 * average row holding every query term once, and coverage is the idf-weighted share of the query
 * the best row matches (about 1 for all terms, more with repeats or a short row). The best row's
 * similarity is sqrt(tanh(coverage)): 0.87 for full coverage, 0.3 at 9% of the query's idf mass.
 * That part does not depend on other rows, so a query whose informative words are absent from the
 * namespace scores low everywhere: a row sharing only a common word with it (idf near 0; FTS5
 * floors it at 1e-6) has coverage near 0, and nothing passes the default threshold 0.3.
 * The square root of the share spreads the list as the LoCoMo recipe does (bench/locomo/RECIPE.md
 * step 6), so a budgeted context gets the runners-up instead of losing them to the threshold
 * (hybrid answer coverage at 3000 characters 0.680 -> 0.739 against a plain tanh(coverage) per
 * row); `weight` < 1 ranks one kind (chunks beside memories in hybrid) under the other.
 */
export function lexicalSimilarities(lexical: LexicalResult, weight = 1): Map<number, number> {
  const out = new Map<number, number>();
  const best = lexical.candidates.reduce((m, c) => Math.max(m, c.bm25), 0);
  if (!(best > 0) || !(lexical.idfSum > 0)) return out;
  const anchor = Math.tanh(best / lexical.idfSum);
  for (const c of lexical.candidates)
    out.set(c.rowid, Math.sqrt((anchor * weight * Math.max(0, c.bm25)) / best));
  return out;
}

/**
 * Vector similarity: the cosine, clamped into [0, 1] (opposite directions say nothing more than
 * unrelated ones).
 */
export function vectorSimilarity(cosine: number): number {
  return Math.min(1, Math.max(0, cosine));
}

/**
 * Fusion of the two signals of one row: the stronger one, raised by the weaker one in proportion
 * to the room left, at half weight:
 *
 *   similarity = hi + 0.5 · lo · (1 − hi),   hi = max(lexical, vector), lo = min(lexical, vector)
 *
 * One signal alone keeps its value (a lexical-only engine reports the lexical similarity as is);
 * agreement lifts a row (0.5 and 0.5 give 0.625) but two weak signals stay weak (0.2 and 0.2
 * give 0.28, under the default threshold), and the result stays in [0, 1].
 */
export function fuseSignals(lexical: number, vector: number): number {
  const hi = Math.max(lexical, vector);
  const lo = Math.min(lexical, vector);
  return hi + 0.5 * lo * (1 - hi);
}

/**
 * Fuses one corpus's lexical and vector candidates into one list, best first; `weight` scales the
 * corpus against the other one in hybrid (applied to both signals); `similarity` turns a cosine
 * into the vector signal (the embedder's own, Embedder.similarity, or the clamped cosine).
 */
export function fuseCorpus(
  corpus: Corpus,
  lexical: LexicalResult,
  vector: readonly VectorCandidate[],
  weight = 1,
  similarity: (cosine: number) => number = vectorSimilarity,
): Scored[] {
  const byRow = new Map<number, Scored>();
  for (const [rowid, l] of lexicalSimilarities(lexical, weight)) {
    byRow.set(rowid, { corpus, rowid, similarity: l, lexical: l, vector: 0 });
  }
  for (const c of vector) {
    const v = Math.sqrt(weight) * similarity(c.cosine);
    const s = byRow.get(c.rowid);
    if (s) s.vector = v;
    else byRow.set(c.rowid, { corpus, rowid: c.rowid, similarity: v, lexical: 0, vector: v });
  }
  const out = [...byRow.values()];
  for (const s of out) s.similarity = fuseSignals(s.lexical, s.vector);
  return out.sort(bySimilarity);
}

/**
 * Best first; on a tie a memory (a distilled fact) before a chunk, then the older row (lower
 * rowid) first, so the order is deterministic.
 */
export function bySimilarity(a: Scored, b: Scored): number {
  return (
    b.similarity - a.similarity ||
    (a.corpus === b.corpus ? 0 : a.corpus === "memories" ? -1 : 1) ||
    a.rowid - b.rowid
  );
}

/** Merges the corpora (hybrid), drops hits under the threshold and keeps the best `limit`. */
export function selectHits(lists: readonly Scored[][], threshold: number, limit: number): Scored[] {
  return lists
    .flat()
    .filter((s) => s.similarity >= threshold)
    .sort(bySimilarity)
    .slice(0, limit);
}
