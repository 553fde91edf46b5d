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
export const COMPAT_VERSION = 3;

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
-- PL/pgSQL: never inlined, so the planner takes ROWS 10 (the store joins these few values to
-- indexes: postings, terms, rowids; inlined, a SQL version's estimate made it hash-join them against
-- a full scan of the table), and its statements' plans are kept for the session: a SQL function
-- that is not inlined is planned again at every call (0.5-1 ms for an array of 80 values, and most
-- of the store's statements read one or two of these).
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE ROWS 10 SET search_path = pg_catalog AS $f$
DECLARE
  d jsonb := CASE WHEN path = '$' THEN j::jsonb ELSE memctx_compat.sqlite_json(j, path) END;
BEGIN
  IF jsonb_typeof(d) = 'array' THEN
    RETURN QUERY SELECT a.ord - 1, a.v #>> '{}', memctx_compat.sqlite_json_type(a.v)
      FROM jsonb_array_elements(d) WITH ORDINALITY AS a(v, ord);
  ELSIF jsonb_typeof(d) = 'object' THEN
    RETURN QUERY SELECT o.ord - 1, o.v #>> '{}', memctx_compat.sqlite_json_type(o.v)
      FROM jsonb_each(d) WITH ORDINALITY AS o(k, v, ord);
  ELSIF d IS NOT NULL THEN
    RETURN QUERY SELECT CAST(0 AS bigint), d #>> '{}', memctx_compat.sqlite_json_type(d);
  END IF;
END $f$;

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
