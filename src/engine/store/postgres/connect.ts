import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { SQLInputValue, SQLOutputValue, StatementResultingChanges } from "node:sqlite";
import {
  MessageChannel,
  type MessagePort,
  receiveMessageOnPort,
  threadId,
  Worker,
} from "node:worker_threads";
import { type Db, type Statement, setDialect, type TransactionLock } from "../connection.js";
import { COMPAT_SCHEMA, COMPAT_VERSION, compatSql } from "./compat.js";
import { setUpPgvector } from "./pgvector.js";
import { PG_SCHEMA_VERSION, pgMigrations } from "./schema.js";
import { translate } from "./translate.js";

/**
 * A PostgreSQL connection with the store's synchronous surface (store/connection.ts Db).
 *
 * The store is synchronous (every service calls it so, inside `transaction(db, fn)` too), and
 * node-postgres is asynchronous. So the connection lives in a worker thread of its own: the
 * calling thread posts {sql, params} and blocks in Atomics.wait until the worker has the answer,
 * then takes it with receiveMessageOnPort. One worker, one connection, one Db: BEGIN ... COMMIT
 * stay on one connection, and each thread that opens a Db (the engine's, each processing
 * thread's) has its own. Costs a thread hop each way per statement (see docs/deploy.md for the
 * measured round trip).
 *
 * Writers serialize as on SQLite where they must: `BEGIN IMMEDIATE` becomes BEGIN plus a
 * transaction-scoped advisory lock (one per schema), so two replicas' write transactions take
 * turns, as two processes' do on one SQLite file, and the store's read-then-write logic (a dream
 * batch, the search index's statistics) sees no interleaving. A namespace's transaction
 * (store/db.ts namespaceTransaction) takes that lock shared and one of its namespace alone, so
 * writers of different namespaces do not wait for each other; job claims take a lock of their own.
 */

/** How a statement's rows come back from the worker. */
interface Answer {
  ok: boolean;
  rows?: unknown[];
  rowCount?: number | null;
  error?: { message: string; code?: string; table?: string; constraint?: string; detail?: string };
}

/** Advisory lock classes (pg_advisory_*(class, key)): the key is the schema's hash. */
const WRITE_LOCK_CLASS = 0x6d656d; // "mem"
/** Job claims (store/db.ts transaction(…, "queue")): they take turns among themselves only. */
const QUEUE_LOCK_CLASS = 0x6a6f62; // "job"
const MIGRATION_LOCK_CLASS = 0x6d6967; // "mig"

/** How long a new connection's worker may take to start and connect. */
const WORKER_START_LIMIT_MS = 30_000;

/** The worker: a plain CommonJS script (eval), so that it runs the same from sources and from dist. */
const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const pg = require(workerData.pgPath);
const { port, signal, config, searchPath } = workerData;
const flag = new Int32Array(signal);
// Integers and booleans as SQLite gives them: numbers, and 1/0.
const types = {
  getTypeParser(oid, format) {
    if (oid === 20 || oid === 1700) return (v) => Number(v);
    if (oid === 16) return (v) => (v === "t" ? 1 : 0);
    return pg.types.getTypeParser(oid, format);
  },
};
const client = new pg.Client({ ...config, types });
let broken = null;
const ready = client.connect().then(() => client.query("SET search_path TO " + searchPath)).catch((e) => { broken = e; });
client.on("error", (e) => { broken = e; });
function answer(a) {
  port.postMessage(a);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}
function failure(e) {
  return { ok: false, error: { message: String(e && e.message || e), code: e && e.code, table: e && e.table,
    constraint: e && e.constraint, detail: e && e.detail } };
}
// Asked by its owner thread once that thread's busy spell is over (engine/memory-trim.ts, which
// this eval'd script cannot import): the same memory-reducing GC, here; no answer is sent, so
// the owner's request/answer pairs are untouched.
function trim() {
  const v8 = require("node:v8");
  try {
    v8.setFlagsFromString("--expose-gc");
    require("node:vm").runInNewContext("gc")({ type: "major", execution: "sync", flavor: "last-resort" });
  } catch {}
  v8.setFlagsFromString("--no-expose-gc");
}
port.on("message", async (m) => {
  if (m.op === "trim") return trim();
  try {
    await ready;
    if (broken) throw broken;
    if (m.op === "ping") {
      answer({ ok: true });
      return;
    }
    if (m.op === "close") {
      await client.end().catch(() => {});
      answer({ ok: true });
      port.close();
      return;
    }
    const r = m.op === "exec"
      ? await client.query(m.sql)
      : await client.query({ name: m.name, text: m.sql, values: m.params, rowMode: m.arrays ? "array" : undefined });
    const last = Array.isArray(r) ? r[r.length - 1] : r;
    answer({ ok: true, rows: m.op === "exec" ? undefined : last.rows, rowCount: last.rowCount });
  } catch (e) {
    answer(failure(e));
  }
});
`;

export interface PostgresOptions {
  /** Test isolation and multi-tenancy: the schema the tables live in (default `public`). */
  schema?: string;
}

/** The URL's own parameters that are memctx's, not the driver's: `schema`. */
export function parseDatabaseUrl(
  url: string,
  dataDir?: string,
): { connectionString: string; schema: string } {
  const u = new URL(url);
  let schema = u.searchParams.get("schema") ?? "public";
  u.searchParams.delete("schema");
  // One schema per data directory (tests: every test's temp directory is a fresh database).
  if (schema === "data-dir") {
    schema = `memctx_${createHash("sha1")
      .update(dataDir ?? "")
      .digest("hex")
      .slice(0, 16)}`;
  }
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`database URL: bad schema name ${schema}`);
  return { connectionString: u.toString(), schema };
}

export class PostgresDatabase implements Db {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  private readonly translated = new Map<string, { text: string; rowidColumn?: string; name: string }>();
  private inTransaction = false;
  /**
   * The namespaces whose locks the open transaction holds (store/db.ts namespaceTransaction,
   * lockNamespace); null when it holds the schema's write lock alone, or none.
   */
  private namespaces: Set<string> | null = null;
  private closed = false;
  readonly schema: string;
  private readonly lockKey: number;
  /**
   * The pgvector extension's schema when the server has it and the `vec` columns are set up
   * (pgvector.ts), else null: set by migrate().
   */
  pgvector: string | null = null;

  constructor(url: string, dataDir?: string) {
    const { connectionString, schema } = parseDatabaseUrl(url, dataDir);
    this.schema = schema;
    this.lockKey = createHash("sha1").update(schema).digest().readInt32BE(0);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const signal = new SharedArrayBuffer(4);
    this.flag = new Int32Array(signal);
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        port: port2,
        signal,
        config: { connectionString, application_name: "memctx" },
        searchPath: `"${schema}", ${COMPAT_SCHEMA}, pg_catalog`,
        pgPath: createRequire(import.meta.url).resolve("pg"),
      },
      transferList: [port2],
      // Not the parent's flags: `--input-type=module` (node -e) would make this CommonJS script ESM.
      execArgv: [],
    });
    // The worker must not keep the process alive on its own: close() ends it.
    this.worker.unref();
    setDialect(this, "postgres");
    // The worker answers once it has connected (or failed to): a worker that never starts would
    // otherwise leave every later call waiting.
    this.check(this.call({ op: "ping" }, WORKER_START_LIMIT_MS));
  }

  /** Sends one request and blocks until the worker answers. */
  private call(request: Record<string, unknown>, limitMs = Number.POSITIVE_INFINITY): Answer {
    if (this.closed) throw new Error("database is not open");
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(request);
    const deadline = performance.now() + limitMs;
    for (;;) {
      Atomics.wait(this.flag, 0, 0, 1000);
      const m = receiveMessageOnPort(this.port);
      if (m) return m.message as Answer;
      if (performance.now() > deadline) {
        this.closed = true;
        void this.worker.terminate();
        throw new Error("the PostgreSQL connection's worker thread did not answer");
      }
    }
  }

  private check(a: Answer): Answer {
    if (a.ok) return a;
    const e = a.error!;
    // SQLite's wording for a unique violation: the store recognises a conflict by it.
    const message =
      e.code === "23505" && e.table
        ? `UNIQUE constraint failed: ${e.table}.${/Key \(([^)]*)\)/.exec(e.detail ?? "")?.[1] ?? e.constraint}`
        : e.message;
    throw Object.assign(new Error(message), { code: e.code, pgMessage: e.message });
  }

  prepare(sql: string): Statement {
    let t = this.translated.get(sql);
    if (!t) {
      t = { ...translate(sql), name: `m${this.translated.size}` };
      this.translated.set(sql, t);
    }
    const { text, rowidColumn, name } = t;
    let arrays = false;
    const query = (params: SQLInputValue[]) => {
      const started = performance.now();
      const a = this.call({ op: "query", sql: text, name, params: params.map(toParam), arrays });
      const took = performance.now() - started;
      if (took > 100 && process.env.MEMCTX_PG_DEBUG)
        process.stderr.write(
          `pg slow ${took.toFixed(0)} ms: ${text.slice(0, Number(process.env.MEMCTX_PG_DEBUG) > 1 ? undefined : 150)} PARAMS ${Number(process.env.MEMCTX_PG_DEBUG) > 1 ? JSON.stringify(params).slice(0, 500) : ""}\n`,
        );
      if (process.env.MEMCTX_PG_PROFILE) {
        const p = profile.get(text) ?? { n: 0, ms: 0 };
        p.n++;
        p.ms += took;
        profile.set(text, p);
      }
      if (!a.ok && process.env.MEMCTX_PG_DEBUG) process.stderr.write(`pg: ${a.error?.message}\n${text}\n`);
      return this.check(a);
    };
    return {
      get: (...params) => query(params).rows![0] as Record<string, SQLOutputValue> | undefined,
      all: (...params) => query(params).rows as Record<string, SQLOutputValue>[],
      iterate: (...params) => (query(params).rows as Record<string, SQLOutputValue>[])[Symbol.iterator](),
      run: (...params): StatementResultingChanges => {
        const a = query(params);
        const rows = a.rows as Record<string, number>[];
        return {
          changes: a.rowCount ?? 0,
          lastInsertRowid: rowidColumn && rows.length ? rows[rows.length - 1]![rowidColumn]! : 0,
        };
      },
      setReturnArrays: (enabled) => {
        arrays = enabled;
      },
    };
  }

  exec(sql: string): void {
    const s = sql.trim();
    if (/^PRAGMA\b/i.test(s)) return;
    if (/^BEGIN\b/i.test(s)) {
      // A write transaction (BEGIN IMMEDIATE) takes the schema's write lock at once.
      this.begin(/IMMEDIATE|EXCLUSIVE/i.test(s) ? "write" : null);
      return;
    }
    const ends = /^(COMMIT|END|ROLLBACK)\b/i.test(s);
    try {
      this.check(this.call({ op: "exec", sql: s }));
    } finally {
      // PostgreSQL ends the transaction even when COMMIT fails.
      if (ends) {
        this.inTransaction = false;
        this.namespaces = null;
      }
    }
  }

  /**
   * BEGIN, then the advisory locks of `lock` for the rest of the transaction (store/db.ts
   * TransactionLock): `write`, the schema's write lock, exclusive; a namespace, that lock shared
   * (so a schema-wide writer still excludes it) and the namespace's own, exclusive; `queue`, the
   * schema's queue lock; none for a read. MEMCTX_PG_PROFILE counts the time spent waiting.
   */
  begin(lock: TransactionLock | null): void {
    const started = performance.now();
    const take =
      lock === null
        ? ""
        : lock === "write"
          ? `; SELECT pg_advisory_xact_lock(${WRITE_LOCK_CLASS}, ${this.lockKey})`
          : lock === "queue"
            ? `; SELECT pg_advisory_xact_lock(${QUEUE_LOCK_CLASS}, ${this.lockKey})`
            : `; SELECT pg_advisory_xact_lock_shared(${WRITE_LOCK_CLASS}, ${this.lockKey}), pg_advisory_xact_lock(${this.namespaceKey(lock.namespaceId)})`;
    const begun = this.call({ op: "exec", sql: `BEGIN${take}` });
    // BEGIN went through but the lock did not (lock_timeout, a cancelled wait): the transaction is
    // aborted, and must end here, as the caller sees none open.
    if (!begun.ok && take) this.call({ op: "exec", sql: "ROLLBACK" });
    this.check(begun);
    if (process.env.MEMCTX_PG_PROFILE) {
      const key = `BEGIN + ${typeof lock === "object" && lock !== null ? "namespace" : (lock ?? "no")} lock`;
      const p = profile.get(key) ?? { n: 0, ms: 0 };
      p.n++;
      p.ms += performance.now() - started;
      profile.set(key, p);
    }
    this.inTransaction = true;
    this.namespaces = typeof lock === "object" && lock !== null ? new Set([lock.namespaceId]) : null;
  }

  /**
   * Inside a namespace's transaction, takes the lock of one more namespace (one it created, one a
   * nested transaction writes) until the transaction ends; nothing when it holds that lock already,
   * or the schema's write lock.
   */
  lockNamespace(id: string): void {
    if (!this.namespaces || this.namespaces.has(id)) return;
    this.check(this.call({ op: "exec", sql: `SELECT pg_advisory_xact_lock(${this.namespaceKey(id)})` }));
    this.namespaces.add(id);
  }

  /** The namespaces whose locks the open transaction holds; null for the schema's write lock. */
  get lockedNamespaces(): ReadonlySet<string> | null {
    return this.namespaces;
  }

  /**
   * The advisory lock key of a namespace of this schema: one bigint, a space apart from the (class,
   * schema) pairs of the schema-wide locks (PostgreSQL keeps the two key forms apart).
   */
  private namespaceKey(id: string): string {
    return createHash("sha1")
      .update(this.schema)
      .update("\0")
      .update(id)
      .digest()
      .readBigInt64BE(0)
      .toString();
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  get isTransaction(): boolean {
    return this.inTransaction;
  }

  /** Has the connection's worker give its heap back (it answers nothing: no call waits on it). */
  trimWorker(): void {
    if (!this.closed) this.port.postMessage({ op: "trim" });
  }

  close(): void {
    if (this.closed) return;
    this.call({ op: "close" });
    this.closed = true;
    this.port.close();
    void this.worker.terminate();
  }

  /** Creates or upgrades the compat functions and the schema, under a session advisory lock. */
  migrate(): number {
    const lock = `${MIGRATION_LOCK_CLASS}, 0`;
    this.check(this.call({ op: "exec", sql: `SELECT pg_advisory_lock(${lock})` }));
    try {
      const compat = this.prepare(
        "SELECT obj_description(oid, 'pg_namespace') AS c FROM pg_namespace WHERE nspname = ?",
      ).get(COMPAT_SCHEMA) as { c: string | null } | undefined;
      if (compat?.c !== `memctx compat ${COMPAT_VERSION}`) this.exec(compatSql);
      this.exec(
        `CREATE SCHEMA IF NOT EXISTS "${this.schema}";
         CREATE TABLE IF NOT EXISTS "${this.schema}".memctx_schema (version INTEGER NOT NULL);
         INSERT INTO "${this.schema}".memctx_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM "${this.schema}".memctx_schema)`,
      );
      const version = () =>
        (this.prepare("SELECT version FROM memctx_schema").get() as { version: number }).version;
      const v0 = version();
      if (v0 > PG_SCHEMA_VERSION) {
        throw new Error(
          `this database was written by a newer memctx (schema ${v0} > ${PG_SCHEMA_VERSION}); upgrade memctx`,
        );
      }
      for (let v = v0; v < PG_SCHEMA_VERSION; v++) {
        this.exec("BEGIN");
        try {
          this.exec(pgMigrations[v]!);
          this.exec(`UPDATE memctx_schema SET version = ${v + 1}`);
          this.exec("COMMIT");
        } catch (err) {
          if (this.isTransaction) this.exec("ROLLBACK");
          throw err;
        }
      }
      this.pgvector = setUpPgvector(this);
      return version();
    } finally {
      this.check(this.call({ op: "exec", sql: `SELECT pg_advisory_unlock(${lock})` }));
    }
  }

  /** The schema version (a round trip: it also says the database answers). */
  schemaVersion(): number {
    return (this.prepare("SELECT version FROM memctx_schema").get() as { version: number }).version;
  }
}

/** MEMCTX_PG_PROFILE=<file prefix>: statements' counts and time, written every 2 s (diagnostics). */
const profile = new Map<string, { n: number; ms: number }>();
if (process.env.MEMCTX_PG_PROFILE) {
  const file = `${process.env.MEMCTX_PG_PROFILE}.${process.pid}.${threadId}`;
  setInterval(() => {
    const top = [...profile].sort((x, y) => y[1].ms - x[1].ms).slice(0, 15);
    const lines = top.map(
      ([sql, p]) => `${p.ms.toFixed(0)} ms ${p.n}x: ${sql.replace(/\s+/g, " ").slice(0, 120)}`,
    );
    writeFileSync(file, `${lines.join("\n")}\n`);
  }, 2_000).unref();
}

/** A parameter as node-postgres takes it (a BLOB's Uint8Array is bytea as it is). */
function toParam(v: SQLInputValue): unknown {
  return typeof v === "bigint" ? v.toString() : v;
}
