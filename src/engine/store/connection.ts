import { AsyncLocalStorage } from "node:async_hooks";
import type { SQLInputValue, SQLOutputValue, StatementResultingChanges } from "node:sqlite";

/**
 * What the store uses of a database connection: asynchronous statements, so that a statement that
 * waits (a PostgreSQL lock, a database restarting) never holds the thread that answers requests.
 * SQLite (store/sqlite.ts) runs them synchronously underneath; PostgreSQL (store/postgres/) on a
 * connection pool.
 */
export interface Statement {
  get(...params: SQLInputValue[]): Promise<Record<string, SQLOutputValue> | undefined>;
  all(...params: SQLInputValue[]): Promise<Record<string, SQLOutputValue>[]>;
  run(...params: SQLInputValue[]): Promise<StatementResultingChanges>;
  /** Rows as arrays of values (in column order) instead of objects. */
  setReturnArrays(enabled: boolean): void;
}

export interface Db {
  prepare(sql: string): Statement;
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

/** The SQL dialect a connection speaks: the few statements that differ pick their text by it. */
export type Dialect = "sqlite" | "postgres";

const dialects = new WeakMap<Db, Dialect>();

/** Marks a connection that is not SQLite's (set by the PostgreSQL backend when it opens one). */
export function setDialect(db: Db, dialect: Dialect): void {
  dialects.set(db, dialect);
}

export function dialectOf(db: Db): Dialect {
  return dialects.get(db) ?? "sqlite";
}

/**
 * The clause that locks the rows a SELECT reads until the transaction ends: PostgreSQL's writers of
 * one namespace run side by side and meet on rows; SQLite's transaction excludes every other writer.
 */
export function forUpdate(db: Db): string {
  return dialectOf(db) === "postgres" ? " FOR UPDATE" : "";
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
