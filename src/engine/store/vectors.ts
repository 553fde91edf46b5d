import type { Db } from "./connection.js";
import { PostgresDatabase } from "./postgres/connect.js";
import type { Corpus } from "./search-index.js";
import { statement } from "./statements.js";

/** A stored embedding: the raw little-endian Float32 bytes of one unit's vector. */
export interface StoredVector {
  rowid: number;
  embedding: Uint8Array;
}

const NAMESPACE_VECTORS_SQL: Record<Corpus, string> = {
  chunks: `SELECT v.chunk_rowid AS rowid, v.embedding AS embedding
           FROM chunks c JOIN chunk_vectors v ON v.chunk_rowid = c.rowid
           WHERE c.namespace_id = $1 AND v.model = $2`,
  memories: `SELECT v.memory_rowid AS rowid, v.embedding AS embedding
             FROM memories m JOIN memory_vectors v ON v.memory_rowid = m.rowid
             WHERE m.namespace_id = $1 AND v.model = $2`,
};

/** Each corpus's vectors: their table and the column holding their row's rowid. */
export const VECTORS_OF: Record<Corpus, { table: string; key: string }> = {
  chunks: { table: "chunk_vectors", key: "chunk_rowid" },
  memories: { table: "memory_vectors", key: "memory_rowid" },
};

/** Every vector of `model` that the namespace's units of `corpus` hold. */
export async function namespaceVectors(
  db: Db,
  corpus: Corpus,
  namespaceId: string,
  model: string,
): Promise<StoredVector[]> {
  return await statement<StoredVector>(db, NAMESPACE_VECTORS_SQL[corpus]).all(namespaceId, model);
}

/**
 * A value that changes whenever the database may have changed: `data_version` moves when another
 * connection (another process) commits; `total_changes()` when this one writes.
 */
export async function dataVersion(db: Db): Promise<string> {
  // PostgreSQL: the next transaction id moves whenever any connection writes (an id is assigned
  // to every writing transaction, this connection's included).
  if (db.dialect.name === "postgres") {
    return String(
      (await statement<{ v: string }>(db, "SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS v").get())!
        .v,
    );
  }
  const v = (await statement<{ data_version: number }>(db, "PRAGMA data_version").get())!;
  const c = (await statement<{ n: number }>(db, "SELECT total_changes() AS n").get())!;
  return `${v.data_version}:${c.n}`;
}

/** A unit near a query vector: its rowid and cosine similarity in [-1, 1]. */
export interface Neighbour {
  rowid: number;
  cosine: number;
}

const VECTOR_TABLE: Record<Corpus, { vectors: string; rowid: string; units: string }> = {
  chunks: { vectors: "chunk_vectors", rowid: "chunk_rowid", units: "chunks" },
  memories: { vectors: "memory_vectors", rowid: "memory_rowid", units: "memories" },
};

/** Per database: the HNSW indexes known to exist ("corpus/dims"). */
const prepared = new WeakMap<Db, { indexes: Set<string> }>();

/**
 * The units of `corpus` in the namespace nearest to `query` by cosine similarity among the vectors
 * of `model`, best first, as many as asked at each call: from pgvector's index on a PostgreSQL
 * connection that has it (indexedNearestVectors), else from a scan over the namespace's packed
 * unit vectors, scored once (scannedNearestVectors). Which one is the store's to choose: a caller
 * only asks. Visibility (forgotten, filters) is the caller's.
 */
export async function nearestVectors(
  db: Db,
  corpus: Corpus,
  namespaceId: string,
  model: string,
  query: Float32Array,
): Promise<(k: number) => Promise<Neighbour[]>> {
  if (query.length === 0) return async () => [];
  let scan: ((k: number) => Neighbour[]) | undefined;
  return async (k) => {
    if (!scan) {
      const indexed = await indexedNearestVectors(db, corpus, namespaceId, model, query, k);
      if (indexed !== null) return indexed;
      scan = await scannedNearestVectors(db, corpus, namespaceId, model, query);
    }
    return scan(k);
  };
}

/**
 * The `k` units of `corpus` in the namespace nearest to `query` by cosine similarity among the
 * vectors of `model`, best first, from pgvector (`ORDER BY vec <=> query LIMIT k` over an HNSW
 * index of the query's dimensions, postgres/pgvector.ts); null when the connection has no pgvector
 * (SQLite, or PostgreSQL without the extension): nearestVectors then scans.
 *
 * The index of a dimension count is built on its first search outside a transaction (an index
 * build inside one would hold writers off until it commits); until then the same ORDER BY runs as
 * an exact scan. HNSW is approximate: pgvector's iterative scan keeps reading the graph until
 * `k` rows of the namespace are found, and its recall is high but not guaranteed complete.
 */
export async function indexedNearestVectors(
  db: Db,
  corpus: Corpus,
  namespaceId: string,
  model: string,
  query: Float32Array,
  k: number,
): Promise<Neighbour[] | null> {
  if (!(db instanceof PostgresDatabase) || db.pgvector === null) return null;
  const dims = query.length;
  if (dims === 0 || k <= 0) return [];
  const ext = `"${db.pgvector}"`;
  const t = VECTOR_TABLE[corpus];
  let state = prepared.get(db);
  if (!state) {
    state = { indexes: new Set() };
    prepared.set(db, state);
  }
  const typed = `${ext}.vector(${dims})`;
  const key = `${corpus}/${dims}`;
  if (!state.indexes.has(key) && !db.isTransaction) {
    await db.exec(
      `CREATE INDEX IF NOT EXISTS ${t.vectors}_hnsw_${dims} ON ${t.vectors}
         USING hnsw ((vec::${typed}) ${ext}.vector_cosine_ops) WHERE ${ext}.vector_dims(vec) = ${dims}`,
    );
    state.indexes.add(key);
  }
  const distance = `((v.vec::${typed}) OPERATOR(${ext}.<=>) ($1::${typed}))`;
  const rows = await statement<{ rowid: number; cosine: number }>(
    db,
    `SELECT v.${t.rowid} AS rowid, 1 - ${distance} AS cosine
     FROM ${t.vectors} v JOIN ${t.units} u ON u.rowid = v.${t.rowid}
     WHERE ${ext}.vector_dims(v.vec) = ${dims} AND u.namespace_id = $2 AND v.model = $3
     ORDER BY ${distance} LIMIT $4`,
  ).all(`[${Array.from(query, (x) => (Number.isFinite(x) ? x : 0)).join(",")}]`, namespaceId, model, k);
  return rows.map((r) => ({ rowid: Number(r.rowid), cosine: Number(r.cosine) }));
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

// What the packed copy was built from (dataVersion): a commit by another connection or a write by
// this one rebuilds the namespace's copy on its next search, so a search never sees stale vectors.

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

/** The nearest of the namespace's packed vectors to `query`, `k` at a time, best first (scored once, here). */
export async function scannedNearestVectors(
  db: Db,
  corpus: Corpus,
  namespaceId: string,
  model: string,
  query: Float32Array,
): Promise<(k: number) => Neighbour[]> {
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

/** The cosine of `query` with each stored vector of its dimensions (others are left out). */
export function cosines(query: Float32Array, vectors: readonly StoredVector[]): Neighbour[] {
  const dims = query.length;
  if (dims === 0) return [];
  const q = unit(Float32Array.from(query));
  const out: Neighbour[] = [];
  for (const r of vectors) {
    const v = storedUnit(r.embedding, dims);
    if (!v) continue;
    let dot = 0;
    for (let i = 0; i < dims; i++) dot += v[i]! * q[i]!;
    out.push({ rowid: r.rowid, cosine: dot });
  }
  return out;
}
