import type { SQLInputValue } from "node:sqlite";
import type { Filter, FilterLeaf } from "../../api/filter.js";
import { FILTER_FIELD_PATTERN } from "../../api/limits.js";

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

/** A WHERE fragment and its positional parameters, in order. */
export interface SqlFragment {
  sql: string;
  params: SQLInputValue[];
}

const TRUE: SqlFragment = { sql: "1", params: [] };

/** The fields that name document columns instead of metadata keys (supplement, typed filter). */
const DOCUMENT_FIELDS = ["source", "type", "documentId"] as const;
type DocumentField = (typeof DOCUMENT_FIELDS)[number];
const isDocumentField = (f: string): f is DocumentField => (DOCUMENT_FIELDS as readonly string[]).includes(f);

/**
 * Compiles a typed filter (`src/api/filter.ts`) into a parameterized WHERE fragment; values only ever
 * travel as parameters. No filter compiles to `1`.
 *
 * Semantics, per leaf:
 * - `eq`/`neq` compare a string (case-sensitive unless `caseSensitive: false`; case folding is
 *   SQLite's `lower()`, i.e. ASCII), a number, or a boolean (JSON `true`/`false`, never 1/0) with a
 *   scalar of the same JSON type; `neq` is the exact negation of `eq`, so it also matches rows
 *   without the key;
 * - `gt`/`gte`/`lt`/`lte` match numeric values only;
 * - `contains`/`notContains` test a substring of a string value (`notContains` matches rows
 *   without the key);
 * - `arrayContains`/`arrayNotContains` test membership in a string array; a scalar string counts
 *   as a one-element array.
 * A metadata key is addressed as `$."key"`, so a period is part of the key, not a path step.
 */
export function compileFilter(filter: Filter | undefined | null, target: FilterTarget): SqlFragment {
  if (!filter) return TRUE;
  return compileNode(filter, target);
}

function compileNode(f: Filter, target: FilterTarget): SqlFragment {
  if ("operands" in f) {
    if (f.operands.length === 0) return { sql: f.operator === "and" ? "1" : "0", params: [] };
    const parts = f.operands.map((o) => compileNode(o, target));
    return joinBalanced(parts, f.operator === "and" ? " AND " : " OR ");
  }
  return compileLeaf(f, target);
}

/**
 * `(a OR b OR c ...)` parses as a chain as deep as it is long, and SQLite refuses expressions
 * deeper than 1,000: five levels of 200 operands would reach it. Halves nest only log2(n) deep.
 */
function joinBalanced(parts: readonly SqlFragment[], joiner: string): SqlFragment {
  if (parts.length === 1) return parts[0]!;
  const mid = Math.ceil(parts.length / 2);
  const left = joinBalanced(parts.slice(0, mid), joiner);
  const right = joinBalanced(parts.slice(mid), joiner);
  return { sql: `(${left.sql}${joiner}${right.sql})`, params: [...left.params, ...right.params] };
}

const positiveOf = (op: FilterLeaf["operator"]) =>
  op === "neq" ? "eq" : op === "notContains" ? "contains" : op === "arrayNotContains" ? "arrayContains" : op;

const negate = (p: SqlFragment): SqlFragment => ({ sql: `(NOT ${p.sql})`, params: p.params });

function compileLeaf(f: FilterLeaf, target: FilterTarget): SqlFragment {
  if (isDocumentField(f.field)) {
    // A target without this column compares against NULL: positive operators never match.
    const cols = target[f.field] ?? "NULL";
    if (typeof cols === "string") return compileColumnLeaf(f, cols);
    const negative =
      f.operator === "neq" || f.operator === "notContains" || f.operator === "arrayNotContains";
    const positive = { ...f, operator: positiveOf(f.operator) } as FilterLeaf;
    const parts = cols.map((c) => compileColumnLeaf(positive, c));
    const any = { sql: `(${parts.map((p) => p.sql).join(" OR ")})`, params: parts.flatMap((p) => p.params) };
    return negative ? negate(any) : any;
  }
  return compileMetadataLeaf(f, target.metadata);
}

/** Leaf over a plain TEXT column; the result is 0 or 1, never NULL, so NOT stays exact. */
function compileColumnLeaf(f: FilterLeaf, col: string): SqlFragment {
  switch (f.operator) {
    case "eq":
    case "neq": {
      const eq =
        typeof f.value !== "string"
          ? { sql: "0", params: [] }
          : f.caseSensitive === false
            ? { sql: `IFNULL(lower(${col}) = lower(?), 0)`, params: [f.value] }
            : { sql: `IFNULL(${col} = ?, 0)`, params: [f.value] };
      return f.operator === "eq" ? eq : negate(eq);
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return { sql: "0", params: [] };
    case "contains":
    case "notContains": {
      const has =
        f.caseSensitive === false
          ? { sql: `IFNULL(instr(lower(${col}), lower(?)) > 0, 0)`, params: [f.value] }
          : { sql: `IFNULL(instr(${col}, ?) > 0, 0)`, params: [f.value] };
      return f.operator === "contains" ? has : negate(has);
    }
    case "arrayContains":
    case "arrayNotContains": {
      // A scalar column is a one-element array.
      const has = { sql: `IFNULL(${col} = ?, 0)`, params: [f.value] };
      return f.operator === "arrayContains" ? has : negate(has);
    }
  }
}

const RANGE_SQL = { gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/** Leaf over one key of a JSON metadata column. */
function compileMetadataLeaf(f: FilterLeaf, meta: string): SqlFragment {
  // The key is quoted so that `a.b` is one key. The path is written into the SQL, not bound: a
  // filter of 12,000 leaves must stay under SQLite's 32,766 bound variables with one value each.
  // The field pattern admits no quote of either kind, and is checked here again.
  if (!FILTER_FIELD_PATTERN.test(f.field))
    throw new Error(`filter field ${JSON.stringify(f.field)} is not a key`);
  const path = `'$."${f.field}"'`;
  const type = `json_type(${meta}, ${path})`;
  const value = `json_extract(${meta}, ${path})`;
  switch (f.operator) {
    case "eq":
    case "neq": {
      let eq: SqlFragment;
      if (typeof f.value === "boolean") {
        eq = { sql: `IFNULL(${type} = ?, 0)`, params: [f.value ? "true" : "false"] };
      } else if (typeof f.value === "number") {
        eq = {
          sql: `IFNULL(${type} IN ('integer', 'real') AND ${value} = ?, 0)`,
          params: [f.value],
        };
      } else if (f.caseSensitive === false) {
        eq = {
          sql: `IFNULL(${type} = 'text' AND lower(${value}) = lower(?), 0)`,
          params: [f.value],
        };
      } else {
        eq = { sql: `IFNULL(${type} = 'text' AND ${value} = ?, 0)`, params: [f.value] };
      }
      return f.operator === "eq" ? eq : negate(eq);
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return {
        sql: `IFNULL(${type} IN ('integer', 'real') AND ${value} ${RANGE_SQL[f.operator]} ?, 0)`,
        params: [f.value],
      };
    case "contains":
    case "notContains": {
      const has =
        f.caseSensitive === false
          ? {
              sql: `IFNULL(${type} = 'text' AND instr(lower(${value}), lower(?)) > 0, 0)`,
              params: [f.value],
            }
          : {
              sql: `IFNULL(${type} = 'text' AND instr(${value}, ?) > 0, 0)`,
              params: [f.value],
            };
      return f.operator === "contains" ? has : negate(has);
    }
    case "arrayContains":
    case "arrayNotContains": {
      // json_each over a scalar yields the scalar itself: a plain string is a one-element array.
      const has = {
        sql: `EXISTS (SELECT 1 FROM json_each(${meta}, ${path}) AS je WHERE je.type = 'text' AND je.value = ?)`,
        params: [f.value],
      };
      return f.operator === "arrayContains" ? has : negate(has);
    }
  }
}
