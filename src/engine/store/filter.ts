import type { DatabaseSync } from "node:sqlite";
import type { Filter, FilterLeaf } from "../../api/filter.js";
import { FILTER_FIELD_PATTERN, FILTER_SQL_MAX_BYTES } from "../../api/limits.js";
import type { Db, Params } from "./connection.js";

/**
 * Where a filter looks: SQL expressions (trusted, written by the engine, never by a caller) of the
 * JSON metadata column and of the document fields that `source`, `type` and `documentId` name.
 * A field without an expression here matches nothing.
 */
export interface FilterTarget {
  /** The row's flat JSON metadata, e.g. `d.metadata` or `m.metadata`. */
  metadata: string;
  /** Several expressions: the leaf holds when any of them matches (`neq`: when none does). */
  source?: string | readonly string[];
  type?: string | readonly string[];
  documentId?: string | readonly string[];
}

// TRUE, FALSE and COALESCE(..., FALSE) rather than 1, 0 and IFNULL(..., 0): one text that both
// SQLite (where they are 1 and 0) and PostgreSQL (which wants booleans) take.

/** The fields that name document columns instead of metadata keys (supplement, typed filter). */
const DOCUMENT_FIELDS = ["source", "type", "documentId"] as const;
type DocumentField = (typeof DOCUMENT_FIELDS)[number];
const isDocumentField = (f: string): f is DocumentField => (DOCUMENT_FIELDS as readonly string[]).includes(f);

/** The SQL function that evaluates a compiled filter over one row; see registerFilterFunction. */
export const FILTER_FUNCTION = "memctx_filter";

/**
 * Above this many leaves a filter is evaluated by FILTER_FUNCTION instead of SQL expressions.
 * Measured over 100k rows (an OR of equalities): 1 leaf 70 ms as SQL, 346 ms as the function;
 * 8 leaves 316 / 366 ms; 16 leaves 624 / 349 ms; 64 leaves 2,093 / 432 ms. SQL cannot take the
 * largest filters at all: 12,000 leaves (FILTER_LEAVES_MAX) take seconds to prepare (SQLite's
 * cost grows with the square of the column references: 1.8 s), and with two columns a leaf
 * would bind more values than SQLite's 32,766.
 */
export const FILTER_SQL_MAX_LEAVES = 10;

/**
 * Compiles a typed filter (`src/api/filter.ts`) into a WHERE fragment; values only ever travel as
 * parameters, added to `p`. No filter compiles to `TRUE`. A filter of up to FILTER_SQL_MAX_LEAVES leaves becomes
 * SQL expressions; a larger one becomes one call of FILTER_FUNCTION, with the compiled filter's
 * handle as its only parameter and the row's metadata and named document columns as arguments
 * (its text is the same for every filter, so its statement is prepared once). `form` forces one
 * of the two (tests hold both to the same semantics); `postgres` is the SQL form in PostgreSQL's
 * JSON operators (filterFormFor), `sql` SQLite's.
 *
 * Semantics, per leaf:
 * - `eq`/`neq` compare a string (case-sensitive unless `caseSensitive: false`; case folding is
 *   ASCII only, as SQLite's `lower()`), a number, or a boolean (JSON `true`/`false`, never 1/0)
 *   with a scalar of the same JSON type; `neq` is the exact negation of `eq`, so it also matches
 *   rows without the key;
 * - `gt`/`gte`/`lt`/`lte` match numeric values only;
 * - `contains`/`notContains` test a substring of a string value (`notContains` matches rows
 *   without the key);
 * - `arrayContains`/`arrayNotContains` test membership in a string array; a scalar string counts
 *   as a one-element array (and an object as the array of its values, as SQLite's json_each).
 * A metadata key is addressed as `$."key"`, so a period is part of the key, not a path step.
 */
export function compileFilter(
  filter: Filter | undefined | null,
  target: FilterTarget,
  p: Params,
  form: FilterForm = filter && countLeaves(filter) > FILTER_SQL_MAX_LEAVES ? "function" : "sql",
): string {
  if (!filter) return "TRUE";
  if (form === "postgres") return withinSqlLimit(postgresFilter(filter, target, p));
  if (form !== "function") return withinSqlLimit(sqlNode(filter, target, false, p));
  const used = new Set<DocumentField>();
  collectDocumentFields(filter, used);
  const columns: { field: DocumentField; count: number }[] = [];
  const args = [target.metadata];
  for (const field of DOCUMENT_FIELDS) {
    if (!used.has(field)) continue;
    // A target without this column compares against NULL: positive operators never match.
    const exprs = target[field] ?? "NULL";
    const list = typeof exprs === "string" ? [exprs] : exprs;
    columns.push({ field, count: list.length });
    args.push(...list);
  }
  const handle = remember(testNode(filter), columns);
  return `${FILTER_FUNCTION}(${p.add(handle)}, ${args.join(", ")})`;
}

export type FilterForm = "sql" | "function" | "postgres";

/**
 * A filter whose SQL would be longer than FILTER_SQL_MAX_BYTES: refused before the database parses
 * it (the HTTP layer answers 400 naming the limit).
 */
export class FilterTooLargeError extends Error {
  override name = "FilterTooLargeError";
  constructor(readonly bytes: number) {
    super(
      `compiles to ${bytes} bytes of SQL, more than the ${FILTER_SQL_MAX_BYTES} a filter may (FILTER_SQL_MAX_BYTES): use fewer leaves or shorter fields`,
    );
  }
}

function withinSqlLimit(sql: string): string {
  // Characters first: a text within the limit in characters is within it in bytes only if ASCII.
  if (sql.length > FILTER_SQL_MAX_BYTES / 4) {
    const bytes = Buffer.byteLength(sql);
    if (bytes > FILTER_SQL_MAX_BYTES) throw new FilterTooLargeError(bytes);
  }
  return sql;
}

/**
 * The form a connection can evaluate: PostgreSQL has no FILTER_FUNCTION (a JavaScript function
 * of this process), so its filters are always SQL, in its own JSON operators; SQLite picks by size
 * (undefined: the default).
 */
export const filterFormFor = (db: Db): "postgres" | undefined =>
  db.dialect.name === "postgres" ? "postgres" : undefined;

const countLeaves = (f: Filter): number =>
  "operands" in f ? f.operands.reduce((n, o) => n + countLeaves(o), 0) : 1;

/**
 * Makes FILTER_FUNCTION known to a connection (openDatabase does it for every connection).
 * Deterministic: a handle always names the same compiled filter.
 */
export function registerFilterFunction(db: DatabaseSync): void {
  db.function(FILTER_FUNCTION, { deterministic: true, varargs: true }, (handle, metadata, ...values) => {
    const compiled = compiled_.get(Number(handle));
    if (!compiled) throw new Error(`${FILTER_FUNCTION}: unknown filter handle ${String(handle)}`);
    const cols: Partial<Record<DocumentField, readonly unknown[]>> = {};
    let at = 0;
    for (const { field, count } of compiled.columns) {
      cols[field] = values.slice(at, at + count);
      at += count;
    }
    let meta: Record<string, unknown> | undefined;
    const row: Row = {
      meta: () => {
        meta ??= parseMetadata(metadata);
        return meta;
      },
      cols,
    };
    return compiled.test(row) ? 1 : 0;
  });
}

/** One row as a filter sees it: its metadata (parsed once, when a leaf asks) and document columns. */
interface Row {
  meta(): Record<string, unknown>;
  cols: Partial<Record<DocumentField, readonly unknown[]>>;
}
type Test = (row: Row) => boolean;

function parseMetadata(text: unknown): Record<string, unknown> {
  if (typeof text !== "string") return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Compiled filters by handle. A handle is used by the statement run right after compileFilter, in
 * the same synchronous stretch, so keeping the most recent ones is enough.
 */
const compiled_ = new Map<number, { test: Test; columns: { field: DocumentField; count: number }[] }>();
const KEPT_FILTERS = 256;
let nextHandle = 1;

function remember(test: Test, columns: { field: DocumentField; count: number }[]): number {
  const handle = nextHandle++;
  compiled_.set(handle, { test, columns });
  if (compiled_.size > KEPT_FILTERS) compiled_.delete(compiled_.keys().next().value!);
  return handle;
}

function collectDocumentFields(f: Filter, into: Set<DocumentField>): void {
  if ("operands" in f) for (const o of f.operands) collectDocumentFields(o, into);
  else if (isDocumentField(f.field)) into.add(f.field);
}

function testNode(f: Filter): Test {
  if ("operands" in f) {
    const parts = f.operands.map(testNode);
    return f.operator === "and" ? (row) => parts.every((p) => p(row)) : (row) => parts.some((p) => p(row));
  }
  return testLeaf(f);
}

const isNegative = (op: FilterLeaf["operator"]) =>
  op === "neq" || op === "notContains" || op === "arrayNotContains";

/** SQLite's lower(): ASCII letters only. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

function testLeaf(f: FilterLeaf): Test {
  const positive = isDocumentField(f.field) ? columnTest(f) : metadataTest(f);
  const field = f.field;
  const test: Test = isDocumentField(field)
    ? (row) => (row.cols[field] ?? [null]).some(positive)
    : (row) => positive(Object.hasOwn(row.meta(), field) ? row.meta()[field] : undefined);
  return isNegative(f.operator) ? (row) => !test(row) : test;
}

/** The positive form of a leaf over one document column (a string, or NULL). */
function columnTest(f: FilterLeaf): (v: unknown) => boolean {
  switch (f.operator) {
    case "eq":
    case "neq": {
      const want = f.value;
      if (typeof want !== "string") return () => false;
      if (f.caseSensitive === false) {
        const w = asciiLower(want);
        return (v) => typeof v === "string" && asciiLower(v) === w;
      }
      return (v) => v === want;
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return () => false;
    case "contains":
    case "notContains":
      return substring(f.value, f.caseSensitive);
    case "arrayContains":
    case "arrayNotContains": {
      // A scalar column is a one-element array.
      const want = f.value;
      return (v) => v === want;
    }
  }
}

/** The positive form of a leaf over one metadata value (undefined when the key is absent). */
function metadataTest(f: FilterLeaf): (v: unknown) => boolean {
  switch (f.operator) {
    case "eq":
    case "neq": {
      const want = f.value;
      if (typeof want === "string" && f.caseSensitive === false) {
        const w = asciiLower(want);
        return (v) => typeof v === "string" && asciiLower(v) === w;
      }
      // Same JSON type and value: a boolean never equals 1, a number never equals "5".
      return (v) => typeof v === typeof want && v === want;
    }
    case "gt":
      return (v) => typeof v === "number" && v > f.value;
    case "gte":
      return (v) => typeof v === "number" && v >= f.value;
    case "lt":
      return (v) => typeof v === "number" && v < f.value;
    case "lte":
      return (v) => typeof v === "number" && v <= f.value;
    case "contains":
    case "notContains":
      return substring(f.value, f.caseSensitive);
    case "arrayContains":
    case "arrayNotContains": {
      const want = f.value;
      return (v) => {
        const items = Array.isArray(v) ? v : v !== null && typeof v === "object" ? Object.values(v) : [v];
        return items.some((i) => i === want);
      };
    }
  }
}

function substring(want: string, caseSensitive: boolean | undefined): (v: unknown) => boolean {
  if (caseSensitive === false) {
    const w = asciiLower(want);
    return (v) => typeof v === "string" && asciiLower(v).includes(w);
  }
  return (v) => typeof v === "string" && v.includes(want);
}

// The SQL form.

/**
 * PostgreSQL's form: the leaves read one row of a subquery that casts the metadata to jsonb once,
 * and evaluates each document column once, per row. Cast in every leaf instead (the column is
 * TEXT), a filter cost its leaves times the whole metadata in parse time and memory for each row:
 * 12,000 leaves over a document of 1,000 keys took a backend to its 3 GiB limit in seconds, inside
 * one row, where neither the statement timeout nor a cancel is looked at. OFFSET 0 keeps the
 * planner from folding the subquery's expressions back into each leaf. Keys travel as parameters.
 */
function postgresFilter(filter: Filter, target: FilterTarget, p: Params): string {
  const used = new Set<DocumentField>();
  collectDocumentFields(filter, used);
  const columns: string[] = [];
  const row: FilterTarget = { metadata: "fx.j" };
  if (hasMetadataLeaf(filter)) columns.push(`CAST(${target.metadata} AS jsonb) AS j`);
  for (const field of DOCUMENT_FIELDS) {
    if (!used.has(field)) continue;
    const exprs = target[field] ?? "NULL";
    const list = typeof exprs === "string" ? [exprs] : exprs;
    list.forEach((expr, i) => {
      columns.push(`${expr} AS ${field.toLowerCase()}_${i}`);
    });
    row[field] = list.map((_, i) => `fx.${field.toLowerCase()}_${i}`);
  }
  return `(SELECT ${sqlNode(filter, row, true, p)} FROM (SELECT ${columns.join(", ")} OFFSET 0) AS fx)`;
}

const hasMetadataLeaf = (f: Filter): boolean =>
  "operands" in f ? f.operands.some(hasMetadataLeaf) : !isDocumentField(f.field);

function sqlNode(f: Filter, target: FilterTarget, pg: boolean, p: Params): string {
  if ("operands" in f) {
    if (f.operands.length === 0) return f.operator === "and" ? "TRUE" : "FALSE";
    const parts = f.operands.map((o) => sqlNode(o, target, pg, p));
    return joinBalanced(parts, f.operator === "and" ? " AND " : " OR ");
  }
  return sqlLeaf(f, target, pg, p);
}

/**
 * `(a OR b OR c ...)` parses as a chain as deep as it is long, and SQLite refuses expressions
 * deeper than 1,000: five levels of 200 operands would reach it. Halves nest only log2(n) deep.
 */
function joinBalanced(parts: readonly string[], joiner: string): string {
  if (parts.length === 1) return parts[0]!;
  const mid = Math.ceil(parts.length / 2);
  return `(${joinBalanced(parts.slice(0, mid), joiner)}${joiner}${joinBalanced(parts.slice(mid), joiner)})`;
}

const positiveOf = (op: FilterLeaf["operator"]) =>
  op === "neq" ? "eq" : op === "notContains" ? "contains" : op === "arrayNotContains" ? "arrayContains" : op;

const negate = (sql: string): string => `(NOT ${sql})`;

function sqlLeaf(f: FilterLeaf, target: FilterTarget, pg: boolean, p: Params): string {
  if (isDocumentField(f.field)) {
    // A target without this column compares against NULL: positive operators never match.
    const cols = target[f.field] ?? "NULL";
    if (typeof cols === "string") return sqlColumnLeaf(f, cols, pg, p);
    const negative =
      f.operator === "neq" || f.operator === "notContains" || f.operator === "arrayNotContains";
    const positive = { ...f, operator: positiveOf(f.operator) } as FilterLeaf;
    const any = `(${cols.map((c) => sqlColumnLeaf(positive, c, pg, p)).join(" OR ")})`;
    return negative ? negate(any) : any;
  }
  return sqlMetadataLeaf(f, target.metadata, pg, p);
}

/** A substring test: SQLite's instr, PostgreSQL's strpos (both 1-based, 0 when absent). */
const position = (pg: boolean, text: string, part: string) =>
  pg ? `strpos(${text}, ${part})` : `instr(${text}, ${part})`;

/** Leaf over a plain TEXT column; the result is 0 or 1, never NULL, so NOT stays exact. */
function sqlColumnLeaf(f: FilterLeaf, col: string, pg: boolean, p: Params): string {
  switch (f.operator) {
    case "eq":
    case "neq": {
      const eq =
        typeof f.value !== "string"
          ? "FALSE"
          : f.caseSensitive === false
            ? `COALESCE(lower(${col}) = lower(${p.add(f.value)}), FALSE)`
            : `COALESCE(${col} = ${p.add(f.value)}, FALSE)`;
      return f.operator === "eq" ? eq : negate(eq);
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return "FALSE";
    case "contains":
    case "notContains": {
      const has =
        f.caseSensitive === false
          ? `COALESCE(${position(pg, `lower(${col})`, `lower(${p.add(f.value)})`)} > 0, FALSE)`
          : `COALESCE(${position(pg, col, p.add(f.value))} > 0, FALSE)`;
      return f.operator === "contains" ? has : negate(has);
    }
    case "arrayContains":
    case "arrayNotContains": {
      // A scalar column is a one-element array.
      const has = `COALESCE(${col} = ${p.add(f.value)}, FALSE)`;
      return f.operator === "arrayContains" ? has : negate(has);
    }
  }
}

const RANGE_SQL = { gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/**
 * Leaf over one key of JSON metadata: on PostgreSQL `meta` is jsonb already (postgresFilter), on
 * SQLite a TEXT column.
 */
function sqlMetadataLeaf(f: FilterLeaf, meta: string, pg: boolean, p: Params): string {
  // SQLite: the key is quoted so that `a.b` is one key. The path is written into the SQL, not
  // bound (one bound value a leaf); the field pattern admits no quote of either kind, and is
  // checked again. PostgreSQL: jsonb's operators with the key, bound.
  if (!FILTER_FIELD_PATTERN.test(f.field))
    throw new Error(`filter field ${JSON.stringify(f.field)} is not a key`);
  const path = `'$."${f.field}"'`;
  const key = pg ? `CAST(${p.add(f.field)} AS text)` : "";
  const json = `(${meta} -> ${key})`;
  const type = `json_type(${meta}, ${path})`;
  const isText = pg ? `jsonb_typeof(${json}) = 'string'` : `${type} = 'text'`;
  const isNumber = pg ? `jsonb_typeof(${json}) = 'number'` : `${type} IN ('integer', 'real')`;
  // JSON true or false, never 1/0 or a string: compared with the bound 'true' / 'false'.
  const boolean = pg ? `CAST(${json} AS text)` : type;
  const value = pg ? `(${meta} ->> ${key})` : `json_extract(${meta}, ${path})`;
  // The value as a number when it is one, else NULL.
  const number = `(CASE WHEN ${isNumber} THEN CAST(${value} AS DOUBLE PRECISION) END)`;
  switch (f.operator) {
    case "eq":
    case "neq": {
      let eq: string;
      if (typeof f.value === "boolean") {
        eq = `COALESCE(${boolean} = ${p.add(f.value ? "true" : "false")}, FALSE)`;
      } else if (typeof f.value === "number") {
        eq = `COALESCE(${number} = ${p.add(f.value)}, FALSE)`;
      } else if (f.caseSensitive === false) {
        eq = `COALESCE(${isText} AND lower(${value}) = lower(${p.add(f.value)}), FALSE)`;
      } else {
        eq = `COALESCE(${isText} AND ${value} = ${p.add(f.value)}, FALSE)`;
      }
      return f.operator === "eq" ? eq : negate(eq);
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return `COALESCE(${number} ${RANGE_SQL[f.operator]} ${p.add(f.value)}, FALSE)`;
    case "contains":
    case "notContains": {
      const has =
        f.caseSensitive === false
          ? `COALESCE(${isText} AND ${position(pg, `lower(${value})`, `lower(${p.add(f.value)})`)} > 0, FALSE)`
          : `COALESCE(${isText} AND ${position(pg, value, p.add(f.value))} > 0, FALSE)`;
      return f.operator === "contains" ? has : negate(has);
    }
    case "arrayContains":
    case "arrayNotContains": {
      // A plain string is a one-element array, an object the array of its values (SQLite's
      // json_each yields a scalar itself and an object's values; jsonb's @> finds a string among
      // an array's elements or equal to a string).
      const has = pg
        ? (() => {
            const want = `to_jsonb(CAST(${p.add(f.value)} AS text))`;
            return `COALESCE(${json} @> ${want} OR (jsonb_typeof(${json}) = 'object' AND EXISTS (SELECT 1 FROM jsonb_each(${json}) AS je WHERE je.value = ${want})), FALSE)`;
          })()
        : `EXISTS (SELECT 1 FROM json_each(${meta}, ${path}) AS je WHERE je.type = 'text' AND je.value = ${p.add(f.value)})`;
      return f.operator === "arrayContains" ? has : negate(has);
    }
  }
}
