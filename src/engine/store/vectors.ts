import { type Db, dialectOf } from "./connection.js";
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
           WHERE c.namespace_id = ? AND v.model = ?`,
  memories: `SELECT v.memory_rowid AS rowid, v.embedding AS embedding
             FROM memories m JOIN memory_vectors v ON v.memory_rowid = m.rowid
             WHERE m.namespace_id = ? AND v.model = ?`,
};

const VECTORS_OF_SQL: Record<Corpus, string> = {
  chunks: `SELECT v.chunk_rowid AS rowid, v.embedding AS embedding FROM json_each(?) j
           CROSS JOIN chunk_vectors v ON v.chunk_rowid = j.value WHERE v.model = ?`,
  memories: `SELECT v.memory_rowid AS rowid, v.embedding AS embedding FROM json_each(?) j
             CROSS JOIN memory_vectors v ON v.memory_rowid = j.value WHERE v.model = ?`,
};

/** Every vector of `model` that the namespace's units of `corpus` hold. */
export function namespaceVectors(db: Db, corpus: Corpus, namespaceId: string, model: string): StoredVector[] {
  return statement(db, NAMESPACE_VECTORS_SQL[corpus]).all(namespaceId, model) as unknown as StoredVector[];
}

/** The vectors of `model` that `rowids` of `corpus` hold (a row without one is left out). */
export function vectorsOf(db: Db, corpus: Corpus, rowids: readonly number[], model: string): StoredVector[] {
  return statement(db, VECTORS_OF_SQL[corpus]).all(
    JSON.stringify(rowids),
    model,
  ) as unknown as StoredVector[];
}

/**
 * A value that changes whenever the database may have changed: `data_version` moves when another
 * connection (another process) commits; `total_changes()` when this one writes.
 */
export function dataVersion(db: Db): string {
  // PostgreSQL: the next transaction id moves whenever any connection writes (an id is assigned
  // to every writing transaction, this connection's included).
  if (dialectOf(db) === "postgres") {
    return String(
      (statement(db, "SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS v").get() as { v: string }).v,
    );
  }
  const v = statement(db, "PRAGMA data_version").get() as { data_version: number };
  const c = statement(db, "SELECT total_changes() AS n").get() as { n: number };
  return `${v.data_version}:${c.n}`;
}
