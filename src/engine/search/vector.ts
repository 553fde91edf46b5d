import type { Db } from "../store/connection.js";
import { type Corpus, type Scope, visibleRowids } from "../store/search-scope.js";
import { invalidateVectors, nearestVectors } from "../store/vectors.js";

export { invalidateVectors };

/** A row near the query vector, by cosine similarity in [-1, 1]. */
export interface VectorCandidate {
  rowid: number;
  cosine: number;
}

/**
 * The best `want` rows of `corpus` in `scope` by cosine similarity to `query`: the store's nearest
 * (pgvector's index, or a scan of the namespace's vectors: store/vectors.ts nearestVectors), then
 * the same visibility check as the lexical path, asking for 8 times more while too few pass.
 */
export async function vectorSearch(
  db: Db,
  corpus: Corpus,
  query: Float32Array,
  model: string,
  scope: Scope,
  want: number,
): Promise<VectorCandidate[]> {
  if (query.length === 0 || want <= 0) return [];
  const nearest = await nearestVectors(db, corpus, scope.namespaceId, model, query);
  let window = Math.max(4 * want, 200);
  for (;;) {
    const near = await nearest(window);
    const visible = await visibleRowids(
      db,
      corpus,
      near.map((n) => n.rowid),
      scope,
    );
    const out = near.filter((n) => visible.has(n.rowid)).slice(0, want);
    if (out.length >= want || near.length < window) return out;
    window *= 8;
  }
}
