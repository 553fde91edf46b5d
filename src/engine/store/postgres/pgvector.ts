import type pg from "pg";

/**
 * pgvector on PostgreSQL, when the server has it: the stored embeddings (memory_vectors and
 * chunk_vectors keep SQLite's raw little-endian Float32 bytes, which every store function reads)
 * also as a `vector` column, generated from those bytes, so no write path changes; nearest
 * neighbours inside a namespace then come from `ORDER BY vec <=> query LIMIT k` over an HNSW index
 * (store/vectors.ts nearestVectors) instead of a scan of the namespace's vectors in JavaScript.
 *
 * Not a numbered schema step: whether the extension exists is the server's business and may change
 * (an operator installs pgvector later), so this runs at every open, after the migrations and under
 * their lock, and does only what is missing. Without the extension (or without the right to create
 * it) nothing changes and search keeps the in-process vector scan.
 */

/** The extension's own schema when memctx creates it: dropping a data schema must never drop it. */
const EXTENSION_SCHEMA = "memctx_vector";

/**
 * The raw Float32 bytes as a vector (IEEE 754 single precision, little-endian, decoded in SQL so
 * that the column can be generated). NULL for an empty or odd-sized value.
 */
const functionSql = (ext: string) => `
CREATE OR REPLACE FUNCTION memctx_f32_vector(b bytea) RETURNS "${ext}".vector
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT SET search_path = pg_catalog AS $$
  SELECT CASE WHEN length(b) = 0 OR length(b) % 4 <> 0 THEN NULL ELSE (
    SELECT CAST(array_agg(
      CASE WHEN e = 0 THEN (1 - 2 * s) * m * power(2::float8, -149)
           ELSE (1 - 2 * s) * (1 + m / 8388608.0::float8) * power(2::float8, e - 127) END
      ORDER BY i) AS real[])::"${ext}".vector
    FROM (
      SELECT i, (x >> 31) & 1 AS s, (x >> 23) & 255 AS e, (x & 8388607)::float8 AS m
      FROM (
        SELECT i, get_byte(b, 4 * i)::bigint | (get_byte(b, 4 * i + 1)::bigint << 8)
                  | (get_byte(b, 4 * i + 2)::bigint << 16) | (get_byte(b, 4 * i + 3)::bigint << 24) AS x
        FROM generate_series(0, length(b) / 4 - 1) i
      ) w
    ) f
  ) END
$$;`;

/**
 * Makes the `vec` columns exist when pgvector can be used; returns the extension's schema, or
 * null (no pgvector: the caller keeps the in-process path). `schema` is the data schema, first on
 * the connection's search_path. MEMCTX_PGVECTOR=off keeps the in-process path whatever the server has.
 */
export async function setUpPgvector(client: pg.ClientBase): Promise<string | null> {
  if (process.env.MEMCTX_PGVECTOR === "off") return null;
  const schemaOf = async () =>
    ((
      await client.query(
        `SELECT n.nspname AS s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
         WHERE e.extname = 'vector'`,
      )
    ).rows[0]?.s as string | undefined) ?? null;
  let ext = await schemaOf();
  if (ext === null) {
    const available = await client.query("SELECT 1 AS ok FROM pg_available_extensions WHERE name = 'vector'");
    if (available.rows.length === 0) return null;
    try {
      await client.query(
        `CREATE SCHEMA IF NOT EXISTS ${EXTENSION_SCHEMA}; CREATE EXTENSION IF NOT EXISTS vector SCHEMA ${EXTENSION_SCHEMA}`,
      );
    } catch {
      // Not allowed to create it here (pgvector is not a trusted extension everywhere): an
      // operator can run CREATE EXTENSION vector once; until then, the in-process path.
      return null;
    }
    ext = await schemaOf();
    if (ext === null) return null;
  }
  const has = await client.query(
    `SELECT count(*) AS n FROM information_schema.columns
     WHERE table_schema = current_schema() AND column_name = 'vec'
       AND table_name IN ('memory_vectors', 'chunk_vectors')`,
  );
  if (Number(has.rows[0].n) < 2) {
    await client.query("BEGIN");
    try {
      await client.query(functionSql(ext));
      for (const table of ["memory_vectors", "chunk_vectors"])
        await client.query(
          `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS vec "${ext}".vector
             GENERATED ALWAYS AS (memctx_f32_vector(embedding)) STORED`,
        );
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    }
  }
  return ext;
}
