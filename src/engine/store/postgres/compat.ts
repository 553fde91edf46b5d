/**
 * SQLite's functions and operators that the store's SQL uses and PostgreSQL lacks, in the schema
 * `memctx_compat`, which every connection's search_path puts before pg_catalog (connect.ts). With
 * them (and translate.ts's rewrites) the store's statements run unchanged.
 *
 * - `json_each(text [, path])`: SQLite's table-valued function: `key` (an array's index), `value`
 *   (a scalar as text, unquoted; an array or object as JSON text) and `type` (SQLite's names). A
 *   scalar yields itself, an object its values.
 * - `=` between an integer and text: `c.rowid = j.value` over json_each's text values. A SQL
 *   function, so the planner inlines it as `c.rowid = j.value::bigint` and uses the index.
 * - `->>` on JSON kept in TEXT columns, with SQLite's paths ('$.key', '$."a.b"', '$[0]') or an
 *   array index; `json_extract`, `json_type`, `instr`, `ifnull`, `julianday`, scalar `max`/`min`.
 *
 * COMPAT_VERSION names this set: a connection that finds another version replaces the schema
 * (under the migration lock).
 */
export const COMPAT_VERSION = 2;

export const COMPAT_SCHEMA = "memctx_compat";

export const compatSql = `
DROP SCHEMA IF EXISTS memctx_compat CASCADE;
CREATE SCHEMA memctx_compat;
COMMENT ON SCHEMA memctx_compat IS 'memctx compat ${COMPAT_VERSION}';

-- SQLite's json_type names of a JSON value.
CREATE FUNCTION memctx_compat.sqlite_json_type(v jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE jsonb_typeof(v)
    WHEN 'string' THEN 'text'
    WHEN 'number' THEN CASE WHEN v::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
    WHEN 'boolean' THEN v::text
    ELSE jsonb_typeof(v) END
$$;

-- A SQLite JSON path ('$', '$.a', '$."a.b"', '$[2]', '$.a[0].b') as a text[] path for #>.
CREATE FUNCTION memctx_compat.sqlite_json_path(path text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(coalesce(replace(m[1], '""', '"'), m[2], m[3]) ORDER BY n), '{}')
  FROM regexp_matches(substr(path, 2), '\\."((?:[^"]|"")*)"|\\.([^.\\[]+)|\\[([0-9]+)\\]', 'g')
    WITH ORDINALITY AS r(m, n)
$$;

CREATE FUNCTION memctx_compat.sqlite_json(j text, path text) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT j::jsonb #> memctx_compat.sqlite_json_path(path)
$$;

CREATE FUNCTION memctx_compat.json_extract(j text, path text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT memctx_compat.sqlite_json(j, path) #>> '{}'
$$;

CREATE FUNCTION memctx_compat.json_type(j text, path text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT memctx_compat.sqlite_json_type(memctx_compat.sqlite_json(j, path))
$$;

CREATE FUNCTION memctx_compat.json_get(j text, path text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT memctx_compat.sqlite_json(j, path) #>> '{}'
$$;
CREATE OPERATOR memctx_compat.->> (LEFTARG = text, RIGHTARG = text, FUNCTION = memctx_compat.json_get);

CREATE FUNCTION memctx_compat.json_at(j text, i integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT j::jsonb ->> i $$;
CREATE OPERATOR memctx_compat.->> (LEFTARG = text, RIGHTARG = integer, FUNCTION = memctx_compat.json_at);

CREATE FUNCTION memctx_compat.json_each(j text, path text DEFAULT '$',
  OUT key bigint, OUT value text, OUT type text) RETURNS SETOF record
-- Not inlined (the SET clause prevents it), so the planner takes ROWS 10: the store joins these
-- few values to indexes (postings, terms, rowids); inlined, the three branches' estimate (201 rows)
-- made it hash-join them against a full scan of the table.
LANGUAGE sql IMMUTABLE PARALLEL SAFE ROWS 10 SET search_path = pg_catalog AS $$
  SELECT e.ord - 1, e.v #>> '{}', memctx_compat.sqlite_json_type(e.v)
  FROM (SELECT memctx_compat.sqlite_json(j, path) AS d) s,
  LATERAL (
    SELECT a.v, a.ord FROM jsonb_array_elements(CASE WHEN jsonb_typeof(s.d) = 'array' THEN s.d ELSE '[]' END)
      WITH ORDINALITY AS a(v, ord)
    UNION ALL
    SELECT o.v, o.ord FROM jsonb_each(CASE WHEN jsonb_typeof(s.d) = 'object' THEN s.d ELSE '{}' END)
      WITH ORDINALITY AS o(k, v, ord)
    UNION ALL
    SELECT s.d, 1 WHERE jsonb_typeof(s.d) NOT IN ('array', 'object')
  ) e
$$;

CREATE FUNCTION memctx_compat.int8_eq_text(a bigint, b text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT a = b::bigint $$;
CREATE OPERATOR memctx_compat.= (LEFTARG = bigint, RIGHTARG = text, FUNCTION = memctx_compat.int8_eq_text);
CREATE FUNCTION memctx_compat.int4_eq_text(a integer, b text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT a = b::bigint $$;
CREATE OPERATOR memctx_compat.= (LEFTARG = integer, RIGHTARG = text, FUNCTION = memctx_compat.int4_eq_text);

CREATE FUNCTION memctx_compat.instr(a text, b text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT strpos(a, b) $$;

CREATE FUNCTION memctx_compat.ifnull(a anyelement, b anyelement) RETURNS anyelement
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(a, b) $$;
CREATE FUNCTION memctx_compat.ifnull(a boolean, b integer) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(a::integer, b) $$;

CREATE FUNCTION memctx_compat.julianday(t text) RETURNS double precision
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT extract(epoch FROM t::timestamptz)::double precision / 86400.0 + 2440587.5
$$;

CREATE FUNCTION memctx_compat.max(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT greatest(a, b) $$;
CREATE FUNCTION memctx_compat.min(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT least(a, b) $$;
`;
