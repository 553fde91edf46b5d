import type { SQLInputValue, SQLOutputValue, StatementResultingChanges } from "node:sqlite";

/**
 * What the store uses of a database connection: the synchronous surface of node:sqlite's
 * DatabaseSync, which it implements as it is. The PostgreSQL backend (store/postgres/) implements
 * the same surface over a connection owned by a worker thread, so every store function runs
 * unchanged on both backends.
 */
export interface Statement {
  get(...params: SQLInputValue[]): Record<string, SQLOutputValue> | undefined;
  all(...params: SQLInputValue[]): Record<string, SQLOutputValue>[];
  run(...params: SQLInputValue[]): StatementResultingChanges;
  iterate(...params: SQLInputValue[]): IterableIterator<Record<string, SQLOutputValue>>;
  /** Rows as arrays of values (in column order) instead of objects. */
  setReturnArrays(enabled: boolean): void;
}

export interface Db {
  prepare(sql: string): Statement;
  /** Runs one or more statements without parameters. */
  exec(sql: string): void;
  /** Whether a transaction is open on this connection. */
  readonly isTransaction: boolean;
  readonly isOpen: boolean;
  close(): void;
}

/**
 * Which writers a transaction excludes (store/db.ts transaction, namespaceTransaction). `write`:
 * every other writer (SQLite's file lock; one advisory lock per schema on PostgreSQL).
 * `{ namespaceId }`: that namespace's writers and every schema-wide one (PostgreSQL; `write` on
 * SQLite). `queue`: only other job claims, for a transaction that reads and writes the jobs table
 * alone (store/jobs.ts claimJob): on PostgreSQL it takes the schema's queue lock instead, so a claim
 * never waits behind another replica's index or dream commit (rows being claimed are passed over
 * with SKIP LOCKED; claims still take turns among themselves, so a one-per-namespace kind is never
 * claimed twice); SQLite has one lock: `write`.
 */
export type TransactionLock = "write" | "queue" | { namespaceId: string };

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
