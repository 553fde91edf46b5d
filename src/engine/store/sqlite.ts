import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from "node:sqlite";
import {
  type Db,
  type Dialect,
  inTransaction,
  type Statement,
  StoreUnavailableError,
  type TransactionLock,
  transactionOf,
} from "./connection.js";
import { withWriteLock } from "./write-lock.js";

/**
 * node:sqlite's connection behind the store's asynchronous surface. SQLite answers at once, so a
 * statement runs synchronously when it is called; what the asynchronous surface adds is that a
 * transaction's awaits let other callers run: their statements wait until it ends (a connection
 * holds one transaction, and they must neither see its uncommitted rows nor write into it).
 */
/** SQLite's side of connection.ts Dialect. */
const sqliteDialect: Dialect = {
  name: "sqlite",
  each: (param, _type, alias) => `json_each(${param}) AS ${alias}`,
  list: (values) => JSON.stringify(values),
  isIn: (expr, param) => `${expr} IN (SELECT value FROM json_each(${param}))`,
  rowsOf: (table, alias, key, param) => ({
    from: `json_each(${param}) AS ${alias}_key CROSS JOIN ${table} ${alias} ON ${alias}.${key} = ${alias}_key.value`,
    where: "TRUE",
  }),
  joinByKey: (table, alias, _columns, on) => `LEFT JOIN ${table} ${alias} ON ${on}`,
  rows: (param, alias) => `json_each(${param}) AS ${alias}`,
  jsonText: (column, key) => `(${column} ->> '$."${key}"')`,
  days: (timestamp) => `julianday(${timestamp})`,
  forUpdate: "",
  skipLocked: "",
  remote: false,
};

const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

/**
 * The file stayed locked past the busy timeout (another process, or a processing thread's long
 * commit): the request fails with 503 and Retry-After, as on PostgreSQL, not with a 500.
 */
function unavailable(err: unknown): unknown {
  const code = (err as { errcode?: unknown })?.errcode;
  if (typeof code !== "number" || ((code & 0xff) !== SQLITE_BUSY && (code & 0xff) !== SQLITE_LOCKED))
    return err;
  return new StoreUnavailableError(
    "SQLite: the database stayed locked by another writer (another process, or a large document's processing); try again shortly",
    5,
    { cause: err },
  );
}

export class SqliteDatabase implements Db {
  readonly dialect = sqliteDialect;
  /** Settles when the open transaction ends; null while none is open. */
  private gate: Promise<void> | null = null;

  constructor(readonly raw: DatabaseSync) {}

  /** Whether a caller outside the open transaction must wait for it. */
  private mustWait(): boolean {
    return this.gate !== null && transactionOf(this) === undefined;
  }

  /** Runs `fn` now, or once the open transaction (another caller's) has ended. */
  async turn<T>(fn: () => T): Promise<T> {
    while (this.mustWait()) await this.gate;
    try {
      return fn();
    } catch (err) {
      throw unavailable(err);
    }
  }

  prepare<Row = Record<string, SQLOutputValue>>(sql: string): Statement<Row> {
    return new SqliteStatement<Row>(this, this.raw.prepare(sql), numberedParams(sql));
  }

  exec(sql: string): Promise<void> {
    return this.turn(() => this.raw.exec(sql));
  }

  get isTransaction(): boolean {
    return transactionOf(this) !== undefined;
  }

  get isOpen(): boolean {
    return this.raw.isOpen;
  }

  async transact<T>(
    lock: TransactionLock,
    fn: () => Promise<T>,
    beforeCommit?: (locked: readonly string[] | null) => Promise<void>,
  ): Promise<T> {
    if (transactionOf(this)) return fn();
    // The gate is taken once this process's write lock is held: callers that only read go on
    // while a write transaction waits for another thread's commit.
    const body = async () => {
      while (this.gate !== null) await this.gate;
      let end!: () => void;
      this.gate = new Promise((resolve) => {
        end = resolve;
      });
      try {
        return await inTransaction({ db: this }, async () => {
          // A read transaction (a snapshot) takes no write lock; every other one takes SQLite's at
          // once, so that two processes never deadlock upgrading a read lock.
          try {
            this.raw.exec(lock === "read" ? "BEGIN" : "BEGIN IMMEDIATE");
          } catch (err) {
            throw unavailable(err);
          }
          try {
            const out = await fn();
            if (beforeCommit) await beforeCommit(null);
            this.raw.exec("COMMIT");
            return out;
          } catch (err) {
            if (this.raw.isTransaction) this.raw.exec("ROLLBACK");
            throw err;
          }
        });
      } finally {
        this.gate = null;
        end();
      }
    };
    return lock === "read" ? body() : withWriteLock(this, body);
  }

  async close(): Promise<void> {
    while (this.gate !== null) await this.gate;
    if (this.raw.isOpen) this.raw.close();
  }
}

/**
 * The names of a statement's numbered parameters (`$1` ... `$N`), or null for one with anonymous
 * `?` (SQLite's own statements: migrations, pragmas). SQLite numbers named parameters in the order
 * they first appear, and node:sqlite binds only anonymous ones by position, so numbered ones are
 * bound by name. A `$` followed by a digit appears nowhere else in the store's SQL (JSON paths are
 * `'$.key'`, `'$[0]'`).
 */
function numberedParams(sql: string): string[] | null {
  let n = 0;
  for (const m of sql.matchAll(/\$(\d+)/g)) n = Math.max(n, Number(m[1]));
  return n === 0 ? null : Array.from({ length: n }, (_, i) => `$${i + 1}`);
}

/**
 * A statement whose rows are read as `Row`s: node:sqlite returns the columns the SELECT names (or
 * their values in order, setReturnArrays), and the statement's caller, which wrote the SELECT,
 * declares them as `Row` (connection.ts Db.prepare). Not checked: the one conversion of SQLite's
 * rows to the store's row types.
 */
class SqliteStatement<Row> implements Statement<Row> {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly st: StatementSync,
    private readonly names: string[] | null,
  ) {}

  /** `params` as node:sqlite binds them: by name for numbered parameters. */
  private bind(params: SQLInputValue[]): SQLInputValue[] {
    const names = this.names;
    if (!names) return params;
    if (params.length !== names.length)
      throw new RangeError(`statement takes ${names.length} parameters, given ${params.length}`);
    const named: Record<string, SQLInputValue> = {};
    for (let i = 0; i < names.length; i++) named[names[i]!] = params[i]!;
    return [named as unknown as SQLInputValue];
  }

  get(...params: SQLInputValue[]) {
    return this.db.turn(() => this.st.get(...this.bind(params)) as Row | undefined);
  }

  all(...params: SQLInputValue[]) {
    return this.db.turn(() => this.st.all(...this.bind(params)) as Row[]);
  }

  async run(...params: SQLInputValue[]) {
    const r = await this.db.turn(() => this.st.run(...this.bind(params)));
    return { changes: Number(r.changes) };
  }

  setReturnArrays(enabled: boolean): void {
    this.st.setReturnArrays(enabled);
  }
}
