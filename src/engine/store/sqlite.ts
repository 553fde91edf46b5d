import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { type Db, inTransaction, type Statement, type TransactionLock, transactionOf } from "./connection.js";
import { withWriteLock } from "./write-lock.js";

/**
 * node:sqlite's connection behind the store's asynchronous surface. SQLite answers at once, so a
 * statement runs synchronously when it is called; what the asynchronous surface adds is that a
 * transaction's awaits let other callers run: their statements wait until it ends (a connection
 * holds one transaction, and they must neither see its uncommitted rows nor write into it).
 */
export class SqliteDatabase implements Db {
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
    return fn();
  }

  prepare(sql: string): Statement {
    return new SqliteStatement(this, this.raw.prepare(sql));
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
          this.raw.exec(lock === "read" ? "BEGIN" : "BEGIN IMMEDIATE");
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

class SqliteStatement implements Statement {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly st: StatementSync,
  ) {}

  get(...params: SQLInputValue[]) {
    return this.db.turn(() => this.st.get(...params));
  }

  all(...params: SQLInputValue[]) {
    return this.db.turn(() => this.st.all(...params));
  }

  run(...params: SQLInputValue[]) {
    return this.db.turn(() => this.st.run(...params));
  }

  setReturnArrays(enabled: boolean): void {
    this.st.setReturnArrays(enabled);
  }
}
