import type { Db } from "../store/connection.js";
import { type Corpus, type Scope, visibleRowids } from "../store/search-scope.js";
import { dataVersion, namespaceVectors, nearestVectors, vectorsOf } from "../store/vectors.js";

/** A row near the query vector, by cosine similarity in [-1, 1]. */
export interface VectorCandidate {
  rowid: number;
  cosine: number;
}

/** One namespace's vectors of one model, packed: row i of `matrix` is `rowids[i]`'s unit vector. */
interface PackedVectors {
  version: string;
  dimensions: number;
  rowids: Float64Array;
  matrix: Float32Array;
}

/** Namespaces kept packed per connection; the least recently searched one is dropped first. */
const MAX_CACHED = 16;

const caches = new WeakMap<Db, Map<string, PackedVectors>>();

// What the packed copy was built from (store/vectors.ts dataVersion): a commit by another
// connection or a write by this one rebuilds the namespace's copy on its next search, so a search
// never sees stale vectors.

/** Drops every packed copy of this connection (for callers that know they changed vectors). */
export function invalidateVectors(db: Db): void {
  caches.delete(db);
}

/**
 * A stored embedding as a unit vector, or null when it has another size (a model changed its
 * output: it cannot be compared).
 */
function storedUnit(embedding: Uint8Array, dims: number): Float32Array | null {
  if (embedding.byteLength !== dims * 4) return null;
  return unit(
    new Float32Array(embedding.buffer.slice(embedding.byteOffset, embedding.byteOffset + dims * 4)),
  );
}

/** `v` scaled to length 1, in place (a zero vector stays zero). */
function unit(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}

async function packed(db: Db, corpus: Corpus, namespaceId: string, model: string, dims: number) {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  const key = `${corpus}\u0000${namespaceId}\u0000${model}`;
  const version = await dataVersion(db);
  const hit = cache.get(key);
  if (hit && hit.version === version && hit.dimensions === dims) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const rows = await namespaceVectors(db, corpus, namespaceId, model);
  const matrix = new Float32Array(rows.length * dims);
  const rowids = new Float64Array(rows.length);
  let n = 0;
  for (const r of rows) {
    const v = storedUnit(r.embedding, dims);
    if (!v) continue;
    matrix.set(v, n * dims);
    rowids[n++] = r.rowid;
  }
  const entry: PackedVectors = {
    version,
    dimensions: dims,
    rowids: rowids.subarray(0, n),
    matrix: matrix.subarray(0, n * dims),
  };
  cache.delete(key);
  cache.set(key, entry);
  while (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
  return entry;
}

/** The `k` best (index, score) pairs of `scores`, best first. */
function topK(scores: Float32Array, k: number): number[] {
  if (k >= scores.length) {
    return [...scores.keys()].sort((a, b) => scores[b]! - scores[a]!);
  }
  // A small min-heap would do; k is at most a few hundred, so keep a sorted window instead.
  const best: number[] = [];
  let floor = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i]!;
    if (best.length === k && s <= floor) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (scores[best[mid]!]! >= s) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, i);
    if (best.length > k) best.pop();
    if (best.length === k) floor = scores[best[k - 1]!]!;
  }
  return best;
}

/**
 * The best `want` rows of `corpus` in `scope` by cosine similarity to `query`: pgvector's nearest
 * on a PostgreSQL connection that has it, else a scan over the namespace's packed unit vectors;
 * then the same visibility check as the lexical path, asking for 8 times more while too few pass.
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
  let scan: ((k: number) => VectorCandidate[]) | undefined;
  const nearest = async (k: number) => {
    if (!scan) {
      const indexed = await nearestVectors(db, corpus, scope.namespaceId, model, query, k);
      if (indexed !== null) return indexed;
      scan = await scanner(db, corpus, query, model, scope.namespaceId);
    }
    return scan(k);
  };
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

/** The `k` nearest of the namespace's packed vectors to `query`, best first (scored once, here). */
async function scanner(
  db: Db,
  corpus: Corpus,
  query: Float32Array,
  model: string,
  namespaceId: string,
): Promise<(k: number) => VectorCandidate[]> {
  const dims = query.length;
  const p = await packed(db, corpus, namespaceId, model, dims);
  const count = p.rowids.length;
  const q = unit(Float32Array.from(query));
  const scores = new Float32Array(count);
  const m = p.matrix;
  for (let r = 0, base = 0; r < count; r++, base += dims) {
    let dot = 0;
    for (let i = 0; i < dims; i++) dot += m[base + i]! * q[i]!;
    scores[r] = dot;
  }
  return (k) => topK(scores, Math.min(k, count)).map((i) => ({ rowid: p.rowids[i]!, cosine: scores[i]! }));
}

/**
 * The cosine of `query` with each of `rowids` that has a vector of `model`: for a search whose
 * vector-only candidates could not pass its threshold, the rows that lexical search found are all
 * that needs a vector, and reading those is cheaper than scanning the namespace.
 */
export async function vectorScores(
  db: Db,
  corpus: Corpus,
  query: Float32Array,
  model: string,
  rowids: readonly number[],
): Promise<VectorCandidate[]> {
  const dims = query.length;
  if (dims === 0 || rowids.length === 0) return [];
  const q = unit(Float32Array.from(query));
  const rows = await vectorsOf(db, corpus, rowids, model);
  const out: VectorCandidate[] = [];
  for (const r of rows) {
    const v = storedUnit(r.embedding, dims);
    if (!v) continue;
    let dot = 0;
    for (let i = 0; i < dims; i++) dot += v[i]! * q[i]!;
    out.push({ rowid: r.rowid, cosine: dot });
  }
  return out;
}
