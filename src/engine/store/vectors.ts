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

const VECTORS_OF: Record<Corpus, { table: string; key: string }> = {
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
  return (await statement(db, NAMESPACE_VECTORS_SQL[corpus]).all(
    namespaceId,
    model,
  )) as unknown as StoredVector[];
}

/** The vectors of `model` that `rowids` of `corpus` hold (a row without one is left out). */
export async function vectorsOf(
  db: Db,
  corpus: Corpus,
  rowids: readonly number[],
  model: string,
): Promise<StoredVector[]> {
  const { table, key } = VECTORS_OF[corpus];
  const rows = db.dialect.rowsOf(table, "v", key, "$1", "bigint");
  return (await statement(
    db,
    `SELECT v.${key} AS rowid, v.embedding AS embedding FROM ${rows.from} WHERE ${rows.where} AND v.model = $2`,
  ).all(db.dialect.list(rowids), model)) as unknown as StoredVector[];
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
      (
        (await statement(db, "SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS v").get()) as {
          v: string;
        }
      ).v,
    );
  }
  const v = (await statement(db, "PRAGMA data_version").get()) as { data_version: number };
  const c = (await statement(db, "SELECT total_changes() AS n").get()) as { n: number };
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
 * The `k` units of `corpus` in the namespace nearest to `query` by cosine similarity among the
 * vectors of `model`, best first, from pgvector (`ORDER BY vec <=> query LIMIT k` over an HNSW
 * index of the query's dimensions, postgres/pgvector.ts); null when the connection has no pgvector
 * (SQLite, or PostgreSQL without the extension): the caller then scans the namespace's vectors
 * itself (namespaceVectors). Visibility (forgotten, filters) is the caller's, as on that path.
 *
 * The index of a dimension count is built on its first search outside a transaction (an index
 * build inside one would hold writers off until it commits); until then the same ORDER BY runs as
 * an exact scan. HNSW is approximate: pgvector's iterative scan keeps reading the graph until
 * `k` rows of the namespace are found, and its recall is high but not guaranteed complete.
 */
export async function nearestVectors(
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
  const rows = (await statement(
    db,
    `SELECT v.${t.rowid} AS rowid, 1 - ${distance} AS cosine
     FROM ${t.vectors} v JOIN ${t.units} u ON u.rowid = v.${t.rowid}
     WHERE ${ext}.vector_dims(v.vec) = ${dims} AND u.namespace_id = $2 AND v.model = $3
     ORDER BY ${distance} LIMIT $4`,
  ).all(`[${Array.from(query, (x) => (Number.isFinite(x) ? x : 0)).join(",")}]`, namespaceId, model, k)) as {
    rowid: number;
    cosine: number;
  }[];
  return rows.map((r) => ({ rowid: Number(r.rowid), cosine: Number(r.cosine) }));
}
