import { AsyncLocalStorage } from "node:async_hooks";
import type { SQLInputValue, SQLOutputValue } from "node:sqlite";

/**
 * What the store uses of a database connection: asynchronous statements, so that a statement that
 * waits (a PostgreSQL lock, a database restarting) never holds the thread that answers requests.
 * SQLite (store/sqlite.ts) runs them synchronously underneath; PostgreSQL (store/postgres/) on a
 * connection pool.
 */
export interface Statement<Row = Record<string, SQLOutputValue>> {
  get(...params: SQLInputValue[]): Promise<Row | undefined>;
  all(...params: SQLInputValue[]): Promise<Row[]>;
  /** A row's new key comes back with RETURNING, read by get() or all(). */
  run(...params: SQLInputValue[]): Promise<{ changes: number }>;
  /**
   * Rows as arrays of values (in column order) instead of objects: prepare the statement with a
   * tuple as its Row (statements.ts arrayStatement).
   */
  setReturnArrays(enabled: boolean): void;
}

export interface Db {
  /** The SQL this connection's database speaks where the two differ. */
  readonly dialect: Dialect;
  /**
   * A statement whose rows are `Row`s, as node-postgres's `query<R>`: the caller that writes the
   * SELECT declares what it names, and nothing checks it (the backends hand the driver's rows on as
   * they are). Without `Row`, the driver's own: columns by name.
   */
  prepare<Row = Record<string, SQLOutputValue>>(sql: string): Statement<Row>;
  /** Runs one or more statements without parameters. */
  exec(sql: string): Promise<void>;
  /**
   * Runs `fn` as one transaction holding `lock` (see TransactionLock). Every statement of this
   * connection that `fn` runs, however deep in its awaits, belongs to the transaction (the
   * transaction is carried by the async context, not passed along); statements of other callers
   * wait for it (SQLite) or run on other connections (PostgreSQL). A transaction opened inside
   * another joins it. `beforeCommit` runs last inside it (the search index's indexing), with the
   * namespaces whose locks it holds (null: the whole store's).
   */
  transact<T>(
    lock: TransactionLock,
    fn: () => Promise<T>,
    beforeCommit?: (locked: readonly string[] | null) => Promise<void>,
  ): Promise<T>;
  /** Whether the calling async context is inside a transaction of this connection. */
  readonly isTransaction: boolean;
  readonly isOpen: boolean;
  close(): Promise<void>;
}

/**
 * Which writers a transaction excludes (store/db.ts transaction, namespaceTransaction). `write`:
 * every other writer (SQLite's file lock; one advisory lock per schema on PostgreSQL).
 * `{ namespaceId }`: that namespace's writers and every schema-wide one (PostgreSQL; `write` on
 * SQLite). `queue`: only other job claims, for a transaction that reads and writes the jobs table
 * alone (store/jobs.ts claimJob): on PostgreSQL it takes the schema's queue lock instead, so a claim
 * never waits behind another replica's index or dream commit (rows being claimed are passed over
 * with SKIP LOCKED; claims still take turns among themselves, so a one-per-namespace kind is never
 * claimed twice); SQLite has one lock: `write`. `read`: a consistent snapshot, no lock (export).
 * `{ documentsOf }`: writes of documents of that namespace (adds, upserts, a document's chunks;
 * null: of namespaces named by the transactions opened inside, a namespace about to be made say),
 * which conflict only row by row: on PostgreSQL no lock of the namespace (the rows the write touches
 * are locked as it touches them, and the search index's spaces when it indexes at the commit), so
 * adds go on while a document of the same namespace is indexed or its memories committed; `write`
 * on SQLite.
 */
export type TransactionLock =
  | "write"
  | "queue"
  | "read"
  | { namespaceId: string }
  | { documentsOf: string | null };

/** The transaction an async context is in, per connection (a transaction of one database may open one of another). */
export interface OpenTransaction {
  db: Db;
  outer: OpenTransaction | undefined;
  /**
   * Cleared when it ends: a timer or task started inside a transaction keeps its async context
   * after the commit, and must not take a finished transaction (or its released connection) for
   * its own.
   */
  open: boolean;
}

const current = new AsyncLocalStorage<OpenTransaction>();

/** The calling context's open transaction of `db`, if any. */
export function transactionOf<T extends OpenTransaction>(db: Db): T | undefined {
  for (let t = current.getStore(); t; t = t.outer) if (t.db === db && t.open) return t as T;
  return undefined;
}

/** Runs `fn` with `tx` as its context's open transaction of `tx.db`, until `fn` settles. */
export async function inTransaction<T, X extends Omit<OpenTransaction, "outer" | "open">>(
  tx: X,
  fn: () => Promise<T>,
): Promise<T> {
  const open = Object.assign(tx, { outer: current.getStore(), open: true });
  try {
    return await current.run(open, fn);
  } finally {
    open.open = false;
  }
}

/**
 * What differs between the two databases' SQL, as each backend's own fragments. Everything else
 * is written once, in SQL that both speak natively: numbered parameters (`$1`; SQLite binds them
 * by name), `IS NOT DISTINCT FROM`, `ON CONFLICT`, `RETURNING`, CTEs, `CAST(x AS bigint)`. What
 * has no common spelling (lists, JSON in TEXT columns, row locks) comes from here, the way a query
 * builder's dialect supplies it (Kysely, Knex); nothing rewrites a statement's text.
 */
export interface Dialect {
  readonly name: "sqlite" | "postgres";
  /**
   * A list parameter as a table `alias(value, key)` of `type` values (`key` orders them as
   * listed); bind `list(values)`. SQLite: json_each of a JSON array; PostgreSQL: unnest of an array.
   */
  each(param: string, type: "bigint" | "text", alias: string): string;
  /** The bound value of a list for `each`, `isIn` and `rowsOf`. */
  list(values: readonly (string | number)[]): SQLInputValue;
  /**
   * Whether `expr` is one of a list parameter's values, as a condition an index on `expr` serves.
   * SQLite: IN a json_each; PostgreSQL: `= ANY` of an array.
   */
  isIn(expr: string, param: string, type: "bigint" | "text"): string;
  /**
   * The rows of `table` AS `alias` whose `key` is one of a list parameter's values, looked up by
   * `key`'s index whatever the table's statistics say (a namespace's rows written a moment ago have
   * none yet): a FROM item and the condition it needs. SQLite pins json_each as the outer loop
   * (CROSS JOIN); PostgreSQL scans the key's index with `= ANY` of an array.
   */
  rowsOf(
    table: string,
    alias: string,
    key: string,
    param: string,
    type: "bigint" | "text",
  ): { from: string; where: string };
  /**
   * A LEFT JOIN of `table` AS `alias` on `on` (a condition on its key), reading `columns`: each
   * outer row's rows looked up by the key whatever the table's statistics say. SQLite's planner
   * does so for a plain LEFT JOIN; PostgreSQL's generic plan hashed the whole table instead (every
   * memory's sources for a search's twenty memories), so there a lateral subquery per row.
   */
  joinByKey(table: string, alias: string, columns: string, on: string): string;
  /**
   * A JSON array parameter (text) of rows, each an array read as `alias.value ->> K` (the store's
   * batched writes: one statement, one parameter, any number of rows).
   */
  rows(param: string, alias: string): string;
  /** The text of key `key` (a literal the engine writes) of a JSON object in a TEXT column. */
  jsonText(column: string, key: string): string;
  /** An ISO 8601 timestamp (text) as fractional days, for differences between two of them. */
  days(timestamp: string): string;
  /**
   * The clause that locks the rows a SELECT reads until the transaction ends (PostgreSQL's writers
   * of one namespace run side by side and meet on rows; SQLite's transaction excludes every other
   * writer, so it has none).
   */
  readonly forUpdate: string;
  /** forUpdate, passing over rows that another transaction holds (job claims). */
  readonly skipLocked: string;
  /**
   * Whether every statement is a round trip to a server (PostgreSQL): a search then has the
   * database sum postings in one statement instead of reading them term by term.
   */
  readonly remote: boolean;
}

/**
 * `count` numbered parameters from `$from` on, comma-separated: a VALUES row, the k-th row of a
 * multi-row VALUES starting at `$(k * width + 1)`.
 */
export function numbered(from: number, count: number): string {
  return Array.from({ length: count }, (_, i) => `$${from + i}`).join(", ");
}

/** Multi-row VALUES of `rows` rows of `width` parameters each, numbered in order. */
export function valuesRows(rows: number, width: number): string {
  return Array.from({ length: rows }, (_, k) => `(${numbered(k * width + 1, width)})`).join(", ");
}

/**
 * The parameters of a statement composed of fragments (filters, scopes): each value gets the next
 * number, and the fragment writes the name `add` returns. Bind `values` in order.
 */
export class Params {
  readonly values: SQLInputValue[] = [];
  constructor(
    readonly dialect: Dialect,
    ...first: SQLInputValue[]
  ) {
    this.values.push(...first);
  }
  add(value: SQLInputValue): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  /** A list of values as a table `alias(value, key)` (Dialect.each). */
  each(values: readonly (string | number)[], type: "bigint" | "text", alias: string): string {
    return this.dialect.each(this.add(this.dialect.list(values)), type, alias);
  }
  /** Whether `expr` is one of `values` (Dialect.isIn). */
  isIn(expr: string, values: readonly (string | number)[], type: "bigint" | "text"): string {
    return this.dialect.isIn(expr, this.add(this.dialect.list(values)), type);
  }
}

/**
 * The database cannot be reached or did not answer in time (PostgreSQL restarting, a statement
 * held behind a lock past its timeout, no free connection): the request may be sent again. The
 * HTTP layer answers 503 with Retry-After.
 */
export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A write hit a unique constraint (`table.column`, or any when not given). */
export function isUniqueViolation(err: unknown, column?: string): boolean {
  const e = err as { code?: unknown; message?: unknown; table?: unknown; detail?: unknown };
  if (e?.code === "23505") {
    if (!column) return true;
    const [table, col] = column.split(".");
    return e.table === table && String(e.detail ?? "").includes(`(${col})`);
  }
  const message = String(e?.message ?? "");
  return /UNIQUE constraint failed/.test(message) && (!column || message.includes(column));
}
