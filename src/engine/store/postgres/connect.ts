import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import type { SQLInputValue, SQLOutputValue } from "node:sqlite";
import { threadId } from "node:worker_threads";
import type pg from "pg";
import {
  type Db,
  type Dialect,
  inTransaction,
  type OpenTransaction,
  type Statement,
  StoreUnavailableError,
  type TransactionLock,
  transactionOf,
} from "../connection.js";
import { setUpPgvector } from "./pgvector.js";
import { PG_SCHEMA_VERSION, pgMigrations } from "./schema.js";

/**
 * A PostgreSQL database behind the store's asynchronous surface (store/connection.ts Db): a pool of
 * connections (node-postgres), so that one statement waiting on a lock or a slow disk holds one
 * connection and one request, never the thread; statements outside a transaction take any free
 * connection, a transaction keeps one from BEGIN to COMMIT (carried by the async context).
 *
 * What an operator sets (environment):
 * - MEMCTX_PG_POOL_SIZE: connections per pool (default: sized for the machine, poolSizeForRequests,
 *   in the process that answers requests; two per job loop plus one in each processing thread,
 *   which has a pool of its own, whose commits do not wait for the WAL flush: store/db.ts
 *   OpenOptions.processingLoops);
 * - MEMCTX_PG_STATEMENT_TIMEOUT_MS: how long one statement may take (default 10 s);
 * - MEMCTX_PG_LOCK_TIMEOUT_MS: how long a statement may wait for a lock (default: the statement's
 *   limit), so that a statement stuck behind another session's lock fails its request (503)
 *   instead of holding it;
 * - MEMCTX_PG_ACQUIRE_TIMEOUT_MS: how long a request waits for a free connection or for a new one
 *   to connect (default 5 s), so that while PostgreSQL is down requests fail at once (503).
 * A connection that breaks (PostgreSQL restarted) is dropped by the pool and the next statement
 * opens a new one: the service comes back by itself.
 *
 * Writers serialize as on SQLite where they must: a write transaction takes a transaction-scoped
 * advisory lock (one per schema), so two replicas' write transactions take turns, as two
 * processes' do on one SQLite file, and the store's read-then-write logic (a dream batch, the
 * search index's statistics) sees no interleaving. A namespace's transaction (store/db.ts
 * namespaceTransaction) takes that lock shared and one of its namespace alone, so writers of
 * different namespaces do not wait for each other; job claims take a lock of their own.
 */

/** Advisory lock classes (pg_advisory_*(class, key)): the key is the schema's hash. */
const WRITE_LOCK_CLASS = 0x6d656d; // "mem"
/** Job claims (store/db.ts transaction(…, "queue")): they take turns among themselves only. */
const QUEUE_LOCK_CLASS = 0x6a6f62; // "job"
const MIGRATION_LOCK_CLASS = 0x6d6967; // "mig"

/**
 * Connections of the pool that answers requests, by default: twice the cores plus one, at least 5
 * (PostgreSQL's wiki and HikariCP size a pool so: more connections than the CPUs can keep busy
 * only queue inside the database). A statement waiting on a lock holds one of them; requests past
 * the pool wait for a free one (MEMCTX_PG_ACQUIRE_TIMEOUT_MS).
 */
const poolSizeForRequests = (cores = availableParallelism()) => Math.max(5, 2 * cores + 1);
const STATEMENT_TIMEOUT_MS_DEFAULT = 10_000;
const ACQUIRE_TIMEOUT_MS_DEFAULT = 5_000;
/** Runs of a transaction that PostgreSQL ends to break a deadlock, before its error is the caller's. */
const DEADLOCK_ATTEMPTS = 3;
/** /health's own statement: a load balancer must hear back within half a second. */
const HEALTH_TIMEOUT_MS = 400;
/**
 * Statements prepared once per connection and kept there (named), at most this many texts of at
 * most this size: the store's own statements are a few kilobytes (3.8 KB the longest seen in the
 * search and profile tests); a large filter makes a text of its own each time, and kept, each
 * such plan stayed in the backend's memory (100-200 MB a 12,000-leaf filter) for the connection's
 * life. The others are parsed and planned at each run, and freed.
 */
const NAMED_STATEMENTS_MAX = 500;
const NAMED_STATEMENT_MAX_CHARS = 8_192;

const envNumber = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

/**
 * node-postgres, loaded with the first PostgreSQL database: a process on SQLite (every stdio MCP
 * server) never reads its modules, a good part of a cold start's. It is CommonJS: require() loads it in place.
 */
let pgLoaded: typeof pg | undefined;
const pgModule = (): typeof pg => (pgLoaded ??= createRequire(import.meta.url)("pg") as typeof pg);

/** Integers and booleans as SQLite gives them (numbers, and 1/0): the store reads both backends' rows alike. */
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20 || oid === 1700) return (v: string) => Number(v);
    if (oid === 16) return (v: string) => (v === "t" ? 1 : 0);
    // biome-ignore lint/suspicious/noExplicitAny: node-postgres's own overloads
    return (pgModule().types.getTypeParser as any)(oid, format);
  },
};

/**
 * PostgreSQL's answers that mean "not now" rather than "wrong": the connection failed or broke,
 * the server is shutting down or starting, a statement or lock wait timed out, no connection came
 * free in time. They become StoreUnavailableError (503 with Retry-After).
 */
function unavailable(err: unknown): StoreUnavailableError | undefined {
  if (err instanceof StoreUnavailableError) return err;
  const e = err as { code?: string; message?: string };
  const code = typeof e?.code === "string" ? e.code : "";
  const message = String(e?.message ?? err);
  const transient =
    /^08/.test(code) || // connection exception
    /^57P0[1-3]$/.test(code) || // admin / crash shutdown, cannot connect now
    code === "57014" || // statement timeout (query_canceled)
    code === "55P03" || // lock_not_available (lock_timeout)
    code === "53300" || // too_many_connections
    ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN"].includes(code) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|terminating connection|Query read timeout/i.test(
      message,
    );
  if (!transient) return undefined;
  const what =
    code === "55P03"
      ? "a statement waited for a lock past its time limit (MEMCTX_PG_LOCK_TIMEOUT_MS)"
      : code === "57014" || /Query read timeout/i.test(message)
        ? "a statement waited past its time limit (MEMCTX_PG_STATEMENT_TIMEOUT_MS)"
        : /timeout exceeded when trying to connect/i.test(message)
          ? "no database connection came free in time (MEMCTX_PG_ACQUIRE_TIMEOUT_MS, MEMCTX_PG_POOL_SIZE)"
          : `the database cannot be reached (${message})`;
  return new StoreUnavailableError(`PostgreSQL: ${what}; try again shortly`, 5, { cause: err });
}

/**
 * node-postgres's Client, whose connection runs `sessionSql` before the pool hands it out: the
 * schema first on its search_path, JIT off, generic plans. pgvector 0.8+: an HNSW scan filtered
 * by namespace goes on until it has k rows (refused by older versions: left as it is).
 */
function sessionClient(sessionSql: string): typeof pg.Client {
  class SessionClient extends pgModule().Client {
    // biome-ignore lint/suspicious/noExplicitAny: node-postgres's constructor takes its config
    constructor(config: any) {
      super(config);
      // A connection PostgreSQL ends (pg_terminate_backend, a restart) emits `error` on its client;
      // the pool listens only while the client is idle, so one checked out (a transaction's, or one
      // still running its session SQL) would stop the process. Its queries fail by themselves
      // (StoreUnavailableError, 503), and a broken client is released as broken.
      this.on("error", () => {});
    }

    start(callback?: (err?: Error) => void): Promise<void> | undefined {
      const ready = super
        .connect()
        .then(() => this.query(sessionSql))
        .then(() => this.query("SET hnsw.iterative_scan = strict_order").catch(() => {}))
        // PostgreSQL 14+: a backend whose client went away (a request's connection given up on)
        // stops its statement at the next check instead of running it to the end.
        .then(() => this.query("SET client_connection_check_interval = 1000").catch(() => {}))
        .then(() => undefined);
      if (!callback) return ready;
      ready.then(() => callback(), callback);
      return undefined;
    }
  }
  // The pool calls connect(callback); a caller may await connect().
  Object.defineProperty(SessionClient.prototype, "connect", { value: SessionClient.prototype.start });
  return SessionClient as unknown as typeof pg.Client;
}

/**
 * A transaction's connection, the namespaces whose locks it holds and those whose search units it
 * indexes at its commit (null: the schema's lock, or none; every namespace's units).
 */
interface PgTransaction extends OpenTransaction {
  client: pg.PoolClient;
  namespaces: Set<string> | null;
  indexed: Set<string> | null;
}

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

/**
 * PostgreSQL's side of connection.ts Dialect. Lists travel as arrays (node-postgres writes a JS
 * array as an array literal) and unnest; rows as one jsonb parameter.
 */
const postgresDialect: Dialect = {
  name: "postgres",
  each: (param, type, alias) => `unnest(CAST(${param} AS ${type}[])) WITH ORDINALITY AS ${alias}(value, key)`,
  // The array itself: toParam passes it to node-postgres as it is.
  list: (values) => values as unknown as SQLInputValue,
  isIn: (expr, param, type) => `${expr} = ANY(CAST(${param} AS ${type}[]))`,
  rowsOf: (table, alias, key, param, type) => ({
    from: `${table} ${alias}`,
    where: `${alias}.${key} = ANY(CAST(${param} AS ${type}[]))`,
  }),
  joinByKey: (table, alias, columns, on) =>
    `LEFT JOIN LATERAL (SELECT ${columns} FROM ${table} ${alias} WHERE ${on} OFFSET 0) ${alias} ON TRUE`,
  rows: (param, alias) => `jsonb_array_elements(CAST(${param} AS jsonb)) AS ${alias}(value)`,
  jsonText: (column, key) => `(CAST(${column} AS jsonb) ->> '${key}')`,
  days: (timestamp) => `(extract(epoch FROM CAST(${timestamp} AS timestamptz)) / 86400.0)`,
  forUpdate: " FOR UPDATE",
  skipLocked: " FOR UPDATE SKIP LOCKED",
  remote: true,
};

export class PostgresDatabase implements Db {
  readonly dialect = postgresDialect;
  private readonly pool: pg.Pool;
  /** Each statement's name on the server: prepared once per connection, on first use. */
  private readonly names = new Map<string, string>();
  private closed = false;
  readonly schema: string;
  private readonly lockKey: number;
  private readonly config: pg.PoolConfig;
  private readonly sessionSql: string;
  /**
   * The pgvector extension's schema when the server has it and the `vec` columns are set up
   * (pgvector.ts), else null: set by migrate().
   */
  pgvector: string | null = null;

  /** `processingLoops`: a processing thread's connection (store/db.ts OpenOptions). */
  constructor(url: string, dataDir?: string, processingLoops?: number) {
    const poolSize = envNumber(
      "MEMCTX_PG_POOL_SIZE",
      processingLoops === undefined ? poolSizeForRequests() : 2 * processingLoops + 1,
    );
    const { connectionString, schema } = parseDatabaseUrl(url, dataDir);
    this.schema = schema;
    this.lockKey = createHash("sha1").update(schema).digest().readInt32BE(0);
    const statementTimeout = envNumber("MEMCTX_PG_STATEMENT_TIMEOUT_MS", STATEMENT_TIMEOUT_MS_DEFAULT);
    const lockTimeout = envNumber("MEMCTX_PG_LOCK_TIMEOUT_MS", statementTimeout);
    // No JIT: its compile of a large expression (a deeply nested filter) ran for minutes, took
    // gigabytes and ignored statement_timeout and pg_cancel_backend, since LLVM never checks for
    // interrupts; memctx's statements are short, and what JIT saves is milliseconds at best.
    // Generic plans: each statement is prepared once per connection and planned once, not at every
    // execution. Its values tell the planner little (lists come as one array or JSON parameter,
    // every table is reached by a key or a namespace's index), and the search's ranking statement
    // spent 1.4 ms of its 3-5 ms planning: search p50 at 10k memories 27.8 -> 16.9 ms in process
    // (npm run bench -- --only speed --quick --backend postgres, back to back).
    this.sessionSql = `SET search_path TO "${schema}", pg_catalog; SET jit = off; SET plan_cache_mode = force_generic_plan${
      processingLoops === undefined ? "" : "; SET synchronous_commit = off"
    }`;
    this.config = {
      connectionString,
      application_name: "memctx",
      types,
      max: poolSize,
      connectionTimeoutMillis: envNumber("MEMCTX_PG_ACQUIRE_TIMEOUT_MS", ACQUIRE_TIMEOUT_MS_DEFAULT),
      idleTimeoutMillis: 30_000,
      statement_timeout: statementTimeout,
      lock_timeout: lockTimeout,
      // Every connection starts with the schema first on its search_path.
      // The server's own timeout may never come (a network gone silent): the driver gives up too.
      query_timeout: statementTimeout + 5_000,
    };
    this.pool = new (pgModule().Pool)({ ...this.config, Client: sessionClient(this.sessionSql) });
    // An idle connection that breaks (PostgreSQL restarted) is dropped by the pool; unheard, its
    // error would stop the process.
    this.pool.on("error", () => {});
  }

  /** The calling context's transaction on this database, if any. */
  private tx(): PgTransaction | undefined {
    return transactionOf<PgTransaction>(this);
  }

  /** Runs a query on the context's transaction connection, else on any free one. */
  async query(config: pg.QueryConfig): Promise<pg.QueryResult> {
    if (this.closed) throw new Error("database is not open");
    const started = performance.now();
    try {
      const tx = this.tx();
      return tx ? await this.run(tx.client, config) : await this.runPooled(config);
    } catch (err) {
      if (process.env.MEMCTX_PG_DEBUG)
        process.stderr.write(`pg: ${(err as Error).message}\n${config.text}\n`);
      throw unavailable(err) ?? err;
    } finally {
      const took = performance.now() - started;
      if (took > 100 && process.env.MEMCTX_PG_DEBUG)
        process.stderr.write(
          `pg slow ${took.toFixed(0)} ms: ${config.text.slice(0, Number(process.env.MEMCTX_PG_DEBUG) > 1 ? undefined : 150)} PARAMS ${Number(process.env.MEMCTX_PG_DEBUG) > 1 ? JSON.stringify(config.values).slice(0, 500) : ""}\n`,
        );
      if (process.env.MEMCTX_PG_PROFILE) {
        const p = profile.get(config.text) ?? { n: 0, ms: 0 };
        p.n++;
        p.ms += took;
        profile.set(config.text, p);
      }
    }
  }

  /** A statement on a free connection of the pool, given back afterwards (or dropped, broken). */
  private async runPooled(config: pg.QueryConfig): Promise<pg.QueryResult> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      return await this.run(client, config);
    } catch (err) {
      if (isBroken(err)) broken = err as Error;
      throw err;
    } finally {
      client.release(broken);
    }
  }

  /**
   * One statement on `client`. When the driver gives up waiting (query_timeout: the server's
   * statement timeout did not end it), the backend would go on with the statement after its
   * connection is dropped: it is ended as well, from a connection of its own.
   */
  private async run(client: pg.ClientBase, config: pg.QueryConfig): Promise<pg.QueryResult> {
    try {
      return await client.query(config);
    } catch (err) {
      const pid = (client as { processID?: number }).processID;
      if (/Query read timeout/i.test(String((err as Error)?.message)) && pid) void this.terminate(pid);
      throw err;
    }
  }

  /** Ends backend `pid` (a statement that outlived its time), on a short-lived connection of its own. */
  private async terminate(pid: number): Promise<void> {
    const client = new (pgModule().Client)({
      ...this.config,
      statement_timeout: HEALTH_TIMEOUT_MS,
      query_timeout: HEALTH_TIMEOUT_MS + 100,
      connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS_DEFAULT,
    });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.query("SELECT pg_terminate_backend($1)", [pid]);
    } catch {
      // The server is gone or the backend ended already.
    } finally {
      void client.end().catch(() => {});
    }
  }

  /**
   * node-postgres's rows are `any`: the statement's caller, which wrote the SELECT, declares what it
   * names as `Row` (connection.ts Db.prepare). Not checked: the one conversion of PostgreSQL's rows
   * to the store's row types.
   */
  prepare<Row = Record<string, SQLOutputValue>>(text: string): Statement<Row> {
    let name = this.names.get(text);
    if (
      name === undefined &&
      text.length <= NAMED_STATEMENT_MAX_CHARS &&
      this.names.size < NAMED_STATEMENTS_MAX
    ) {
      name = `m${this.names.size}`;
      this.names.set(text, name);
    }
    let arrays = false;
    const query = (params: SQLInputValue[]) =>
      this.query({
        ...(name === undefined ? {} : { name }),
        text,
        values: params.map(toParam),
        ...(arrays ? { rowMode: "array" as const } : {}),
      });
    return {
      get: async (...params) => (await query(params)).rows[0] as Row | undefined,
      all: async (...params) => (await query(params)).rows as Row[],
      run: async (...params) => ({ changes: (await query(params)).rowCount ?? 0 }),
      setReturnArrays: (enabled) => {
        arrays = enabled;
      },
    };
  }

  async exec(sql: string): Promise<void> {
    await this.query({ text: sql.trim() });
  }

  get isTransaction(): boolean {
    return this.tx() !== undefined;
  }

  /**
   * BEGIN on a connection of its own, then the advisory locks of `lock` for the rest of the
   * transaction (connection.ts TransactionLock): `write`, the schema's write lock, exclusive; a
   * namespace, that lock shared (so a schema-wide writer still excludes it) and the namespace's
   * own, exclusive; `queue`, the schema's queue lock; `read`, a repeatable-read snapshot.
   */
  async transact<T>(
    lock: TransactionLock,
    fn: () => Promise<T>,
    beforeCommit?: (locked: readonly string[] | null) => Promise<void>,
  ): Promise<T> {
    if (this.tx()) return await this.transactOnce(lock, fn, beforeCommit);
    // Writers of one namespace meet on rows (documentTransaction), and two can wait for each other
    // (PostgreSQL then ends one with deadlock_detected): the one ended is run again from the start,
    // as PostgreSQL's documentation advises; its statements were all rolled back.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.transactOnce(lock, fn, beforeCommit);
      } catch (err) {
        if ((err as { code?: string }).code !== "40P01" || attempt >= DEADLOCK_ATTEMPTS) throw err;
      }
    }
  }

  private async transactOnce<T>(
    lock: TransactionLock,
    fn: () => Promise<T>,
    beforeCommit?: (locked: readonly string[] | null) => Promise<void>,
  ): Promise<T> {
    const open = this.tx();
    if (open) {
      if (typeof lock === "object" && "namespaceId" in lock) await this.lockNamespace(lock.namespaceId);
      else if (typeof lock === "object") {
        if (lock.documentsOf !== null) open.indexed?.add(lock.documentsOf);
      }
      // A store-wide write inside a namespace's: it was written for one writer at a time, which the
      // locks of the namespaces this transaction writes give it (PostgreSQL cannot turn the
      // schema's lock, held shared, into an exclusive one without risking a deadlock).
      else if (lock === "write") for (const id of open.indexed ?? []) await this.lockNamespace(id);
      return fn();
    }
    if (this.closed) throw new Error("database is not open");
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw unavailable(err) ?? err;
    }
    let broken: Error | undefined;
    try {
      const started = performance.now();
      const take =
        lock === "read"
          ? " ISOLATION LEVEL REPEATABLE READ READ ONLY"
          : lock === "write"
            ? `; SELECT pg_advisory_xact_lock(${WRITE_LOCK_CLASS}, ${this.lockKey})`
            : lock === "queue"
              ? `; SELECT pg_advisory_xact_lock(${QUEUE_LOCK_CLASS}, ${this.lockKey})`
              : "documentsOf" in lock
                ? `; SELECT pg_advisory_xact_lock_shared(${WRITE_LOCK_CLASS}, ${this.lockKey})`
                : `; SELECT pg_advisory_xact_lock_shared(${WRITE_LOCK_CLASS}, ${this.lockKey}), pg_advisory_xact_lock(${this.namespaceKey(lock.namespaceId)})`;
      const namespaces =
        typeof lock !== "object"
          ? null
          : "documentsOf" in lock
            ? new Set<string>()
            : new Set([lock.namespaceId]);
      const tx: Omit<PgTransaction, "outer" | "open"> = {
        db: this as Db,
        client,
        namespaces,
        indexed:
          typeof lock !== "object"
            ? null
            : "documentsOf" in lock
              ? new Set(lock.documentsOf === null ? [] : [lock.documentsOf])
              : new Set([lock.namespaceId]),
      };
      return await inTransaction(tx, async () => {
        try {
          await this.query({ text: `BEGIN${take}` });
          if (process.env.MEMCTX_PG_PROFILE) {
            const key = `BEGIN + ${typeof lock === "object" ? "namespace" : lock} lock`;
            const p = profile.get(key) ?? { n: 0, ms: 0 };
            p.n++;
            p.ms += performance.now() - started;
            profile.set(key, p);
          }
          const out = await fn();
          if (beforeCommit) await beforeCommit(tx.indexed ? [...tx.indexed] : null);
          await this.query({ text: "COMMIT" });
          return out;
        } catch (err) {
          await client.query("ROLLBACK").catch((e: Error) => {
            broken = e;
          });
          throw err;
        }
      });
    } catch (err) {
      if (unavailable(err)) broken ??= err as Error;
      throw err;
    } finally {
      // A connection that broke is not given back to serve the next request.
      client.release(broken);
    }
  }

  /**
   * Inside a namespace's transaction, takes the lock of one more namespace (one it created, one a
   * nested transaction writes) until the transaction ends; nothing when it holds that lock already,
   * or the schema's write lock.
   */
  async lockNamespace(id: string): Promise<void> {
    const tx = this.tx();
    if (!tx?.namespaces || tx.namespaces.has(id)) return;
    await this.query({ text: `SELECT pg_advisory_xact_lock(${this.namespaceKey(id)})` });
    tx.namespaces.add(id);
    tx.indexed?.add(id);
  }

  /**
   * Inside a transaction, takes a lock of `name` (writers of the same caller id, say) until it ends:
   * the rows it guards do not exist yet, so no row lock can serialize their writers. Nothing under
   * the schema's write lock, which excludes every other writer already.
   */
  async lockName(name: string): Promise<void> {
    const tx = this.tx();
    if (!tx?.namespaces) return;
    await this.query({ text: `SELECT pg_advisory_xact_lock(${this.namespaceKey(`name:${name}`)})` });
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end().catch(() => {});
  }

  /**
   * Creates or upgrades the schema on a connection of its own, under a session advisory lock of
   * this schema (replicas starting at once migrate it once; other schemas of the database go on),
   * with no statement or lock timeout: a migration may rightly take minutes, and a replica that
   * finds another migrating waits for it instead of failing its start. While the migration waits on
   * another session, `log` says so (once), naming that session. Each step also re-reads the version
   * under the version row's lock, so that a migrator holding another lock key (an older memctx)
   * and this one never run a step twice.
   */
  async migrate(log: (message: string) => void = defaultLog): Promise<number> {
    if (this.closed) throw new Error("database is not open");
    const client = new (pgModule().Client)({
      ...this.config,
      statement_timeout: 0,
      lock_timeout: 0,
      query_timeout: undefined,
    });
    client.on("error", () => {});
    const watch = new MigrationWatch(this, client, log);
    try {
      await client.connect();
      await client.query(`${this.sessionSql}; SET statement_timeout = 0; SET lock_timeout = 0`);
      const lock = `${MIGRATION_LOCK_CLASS}, ${this.lockKey}`;
      const got = (await client.query(`SELECT pg_try_advisory_lock(${lock}) AS ok`)).rows[0].ok;
      if (!got) {
        watch.said = true;
        log(
          `waiting for the database schema "${this.schema}": another memctx is migrating it; this one starts once that is done`,
        );
        watch.start();
        await client.query(`SELECT pg_advisory_lock(${lock})`);
      } else watch.start();
      try {
        await client.query(
          `CREATE SCHEMA IF NOT EXISTS "${this.schema}";
           CREATE TABLE IF NOT EXISTS "${this.schema}".memctx_schema (version INTEGER NOT NULL);
           INSERT INTO "${this.schema}".memctx_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM "${this.schema}".memctx_schema)`,
        );
        const version = async (lockRow = false) =>
          (await client.query(`SELECT version FROM memctx_schema${lockRow ? " FOR UPDATE" : ""}`)).rows[0]
            .version as number;
        const v0 = await version();
        if (v0 > PG_SCHEMA_VERSION) {
          throw new Error(
            `this database was written by a newer memctx (schema ${v0} > ${PG_SCHEMA_VERSION}); upgrade memctx`,
          );
        }
        for (let v = v0; v < PG_SCHEMA_VERSION; v++) {
          await client.query("BEGIN");
          try {
            // Another migrator (outside this lock) may have run this step meanwhile.
            if ((await version(true)) !== v) {
              await client.query("ROLLBACK");
              continue;
            }
            await client.query(pgMigrations[v]!);
            await client.query(`UPDATE memctx_schema SET version = ${v + 1}`);
            await client.query("COMMIT");
          } catch (err) {
            await client.query("ROLLBACK").catch(() => {});
            throw err;
          }
        }
        this.pgvector = await setUpPgvector(client);
        const reached = await version();
        if (watch.said) log(`the database schema "${this.schema}" is ready (schema ${reached})`);
        return reached;
      } finally {
        await client.query(`SELECT pg_advisory_unlock(${lock})`).catch(() => {});
      }
    } catch (err) {
      throw unavailable(err) ?? err;
    } finally {
      watch.stop();
      // Ended before the pool connects: a server that takes one connection at a time (PGlite) has
      // it back.
      await client.end().catch(() => {});
    }
  }

  /**
   * The sessions that `pid`'s statement waits for, with what they run (pg_blocking_pids): what a
   * replica waiting to migrate names. Read on a short-lived connection with a short limit.
   */
  async blockersOf(pid: number): Promise<{ pid: number; application: string; query: string }[]> {
    const client = new (pgModule().Client)({
      ...this.config,
      statement_timeout: HEALTH_TIMEOUT_MS,
      lock_timeout: HEALTH_TIMEOUT_MS,
      query_timeout: HEALTH_TIMEOUT_MS + 100,
      connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS_DEFAULT,
    });
    client.on("error", () => {});
    try {
      await client.connect();
      const r = await client.query(
        `SELECT pid, application_name AS application, left(query, 120) AS query
         FROM pg_stat_activity WHERE pid = ANY(pg_blocking_pids($1))`,
        [pid],
      );
      return r.rows as { pid: number; application: string; query: string }[];
    } catch {
      return [];
    } finally {
      void client.end().catch(() => {});
    }
  }

  /**
   * The schema version, read on a connection of its own with a short limit, not from the pool: a
   * load balancer asks while every pooled connection may be waiting on a lock, and must hear
   * within half a second whether the database answers.
   */
  async schemaVersion(): Promise<number> {
    if (this.closed) throw new Error("database is not open");
    const client = new (pgModule().Client)({
      ...this.config,
      statement_timeout: HEALTH_TIMEOUT_MS,
      lock_timeout: HEALTH_TIMEOUT_MS,
      query_timeout: HEALTH_TIMEOUT_MS + 100,
      connectionTimeoutMillis: HEALTH_TIMEOUT_MS,
    });
    client.on("error", () => {});
    try {
      await client.connect();
      const r = await client.query(`SELECT version FROM "${this.schema}".memctx_schema`);
      return r.rows[0].version as number;
    } catch (err) {
      throw unavailable(err) ?? err;
    } finally {
      void client.end().catch(() => {});
    }
  }
}

/** MEMCTX_PG_PROFILE=<file prefix>: statements' counts and time, written every 2 s (diagnostics). */
const profile = new Map<string, { n: number; ms: number }>();
if (process.env.MEMCTX_PG_PROFILE) {
  const file = `${process.env.MEMCTX_PG_PROFILE}.${process.pid}.${threadId}`;
  setInterval(() => {
    const top = [...profile].sort((x, y) => y[1].ms - x[1].ms).slice(0, 80);
    const lines = top.map(
      ([sql, p]) => `${p.ms.toFixed(0)} ms ${p.n}x: ${sql.replace(/\s+/g, " ").slice(0, 120)}`,
    );
    writeFileSync(file, `${lines.join("\n")}\n`);
  }, 2_000).unref();
}

const defaultLog = (message: string) => process.stderr.write(`memctx: ${message}\n`);

/** How often a migration looks at whether it waits on another session (to say so once). */
const MIGRATION_WATCH_MS = 1_000;

/**
 * Watches a migrating connection: once its statement waits on another session's lock (an
 * operator's `LOCK TABLE`, a long transaction, a migrator of an older memctx), says so once,
 * naming that session, so that a replica slow to start is not a mystery.
 */
class MigrationWatch {
  said = false;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly db: PostgresDatabase,
    private readonly client: pg.Client,
    private readonly log: (message: string) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.look(), MIGRATION_WATCH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async look(): Promise<void> {
    const pid = (this.client as { processID?: number }).processID;
    if (this.said || this.busy || !pid) return;
    this.busy = true;
    try {
      const blockers = await this.db.blockersOf(pid);
      if (blockers.length === 0 || this.said) return;
      this.said = true;
      const who = blockers
        .map(
          (b) => `pid ${b.pid}${b.application ? ` (${b.application})` : ""}: ${b.query.replace(/\s+/g, " ")}`,
        )
        .join("; ");
      this.log(
        `waiting for the database schema "${this.db.schema}": another session holds a lock the migration needs (${who}); this one starts once it is released`,
      );
    } finally {
      this.busy = false;
    }
  }
}

/** An error after which a connection cannot serve another statement: it is dropped, not pooled. */
function isBroken(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return (
    /^08|^57P0[1-3]$/.test(String(e?.code ?? "")) ||
    ["ECONNRESET", "EPIPE", "ETIMEDOUT"].includes(String(e?.code ?? "")) ||
    /Connection terminated|Client has encountered a connection error|Connection ended|terminating connection|Query read timeout/i.test(
      String(e?.message ?? err),
    )
  );
}

/** A parameter as node-postgres takes it (a BLOB's Uint8Array is bytea as it is). */
function toParam(v: SQLInputValue): unknown {
  return typeof v === "bigint" ? v.toString() : v;
}
