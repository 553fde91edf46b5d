import { createHash, randomBytes } from "node:crypto";
import { chmodSync, closeSync, existsSync, openSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { DATA_DIR_MODE, makeDataDir } from "../data-dir.js";
import { type Db, StoreUnavailableError, type TransactionLock } from "./connection.js";
import { registerFilterFunction } from "./filter.js";
import { PostgresDatabase } from "./postgres/connect.js";
import { migrate } from "./schema.js";
import { indexPending, indexQueued, registerSearchFunctions } from "./search-index.js";
import { useSecretKey } from "./secrets.js";
import { SqliteDatabase } from "./sqlite.js";
import { useWriteLock } from "./write-lock.js";

export type { Db } from "./connection.js";

export const DATABASE_FILE = "memctx.db";

/** How long a statement waits for another connection's write lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;

/** The files of the data directory are the owner's alone, as the directory is (data-dir.ts). */
export const DATA_FILE_MODE = 0o600;
export { DATA_DIR_MODE };

export interface OpenOptions {
  /**
   * The write lock of another connection of this process to the same file (store/write-lock.ts
   * writeLockOf): a processing thread's connection takes turns with the engine's through it.
   */
  writeLock?: SharedArrayBuffer | undefined;
  /**
   * What the connection's page cache is sized for. "writes" (a processing thread's): the search
   * index's postings are inserted in term order, all over their B-tree, and a larger cache made
   * ingest 112 -> 165 documents/s to done. "reads" (default; the connection that answers requests,
   * which writes little): searches at 100k memories were as fast with 8 MiB as with 64 MiB
   * (p50 10.0-10.6 vs 10.9-11.5 ms, bench/.prof search), since the OS keeps the file's pages, and
   * the process held 70 MiB less; with SQLite's 2 MiB default p95 doubled.
   */
  cache?: "reads" | "writes";
  /**
   * `postgres://...` (MEMCTX_DATABASE_URL, `--database-url`): the database is PostgreSQL
   * (store/postgres/), and the data directory keeps only the secret key.
   */
  databaseUrl?: string | undefined;
  /**
   * A processing thread's connection, running this many job loops (processing-thread.ts). On
   * PostgreSQL its pool has two connections per loop and one more (a job's transaction and its
   * lease renewal each; periodic tasks), and its commits do not wait for the WAL flush
   * (synchronous_commit off): what it writes (chunks, the search index, memories, job bookkeeping)
   * is made from documents already committed, and a commit lost to a server crash leaves its job to
   * run again. Writes a caller is answered for (an add) always wait for the flush.
   */
  processingLoops?: number | undefined;
  /**
   * false: this connection's commits never checkpoint the WAL into the database file (the other
   * connections' do, see checkpoint()). A checkpoint runs in the commit that passes the threshold:
   * on the connection that answers requests, a 40 MB upload's commit spent 200 ms copying the WAL.
   */
  checkpoints?: boolean;
  /**
   * Where opening says what it waits for (PostgreSQL: another process migrating the schema).
   * Default: standard error.
   */
  log?: ((message: string) => void) | undefined;
}

const READS_CACHE_MIB = 8;
const WRITES_CACHE_MIB = 64;

/**
 * Opens (and migrates) `<dataDir>/memctx.db`: WAL so readers never block the writer and several
 * processes share one file; a busy timeout so they wait for each other instead of failing.
 * A new data directory is made 0700 and the database file 0600 (SQLite gives its -wal and -shm
 * files the database file's mode); an existing directory keeps the mode its owner chose.
 */
export async function openDatabase(dataDir: string, opts: OpenOptions = {}): Promise<Db> {
  if (opts.databaseUrl) return await openPostgres(dataDir, opts.databaseUrl, opts.processingLoops, opts.log);
  makeDataDir(dataDir);
  const file = join(dataDir, DATABASE_FILE);
  // Created here, before SQLite does, so that it is never readable by others, not even briefly.
  closeSync(openSync(file, "a", DATA_FILE_MODE));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      if (existsSync(f)) chmodSync(f, DATA_FILE_MODE);
    } catch (err) {
      // Another user's file that this one may still write through its group: left as it is.
      if ((err as NodeJS.ErrnoException).code !== "EPERM") throw err;
    }
  }
  const raw = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
  const db = new SqliteDatabase(raw);
  useWriteLock(db, opts.writeLock);
  useSecretKey(db, dataDir);
  registerFilterFunction(raw);
  raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  raw.exec("PRAGMA journal_mode = WAL");
  // NORMAL in WAL mode: a process crash loses nothing committed; only an OS crash or power
  // loss can drop the last transactions. FULL costs an fsync per commit.
  raw.exec("PRAGMA synchronous = NORMAL");
  raw.exec("PRAGMA foreign_keys = ON");
  // See OpenOptions.cache: SQLite's cache_size counts KiB when negative.
  raw.exec(`PRAGMA cache_size = ${-1024 * (opts.cache === "writes" ? WRITES_CACHE_MIB : READS_CACHE_MIB)}`);
  raw.exec(`PRAGMA wal_autocheckpoint = ${opts.checkpoints === false ? 0 : 10000}`);
  registerSearchFunctions(raw);
  migrate(raw);
  // Units a migration queued (or a process left queued when it stopped) are indexed before use;
  // with nothing queued, opening takes no write lock.
  await indexQueued(db);
  return db;
}

/** Copies what the WAL holds into the database file, as far as no reader needs it (SQLite's PASSIVE). */
export async function checkpoint(db: Db): Promise<void> {
  if (!(db instanceof PostgresDatabase)) await db.exec("PRAGMA wal_checkpoint(PASSIVE)");
}

/** Opens (and migrates) a PostgreSQL database: the same store over store/postgres/. */
async function openPostgres(
  dataDir: string,
  url: string,
  processingLoops?: number,
  log?: (message: string) => void,
): Promise<Db> {
  makeDataDir(dataDir);
  const db = new PostgresDatabase(url, dataDir, processingLoops);
  try {
    useSecretKey(db, dataDir);
    await db.migrate(log);
    await indexQueued(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/**
 * Runs `fn` in one write transaction (SQLite's write lock taken up front, so two processes never
 * deadlock upgrading a read lock). The chunks and memories it wrote are indexed for search before
 * it commits (store/search-index.ts indexPending). A transaction opened inside another runs under
 * the outer one's lock. `fn` must not wait on anything but the store (a fetch, a model): the
 * transaction holds its lock meanwhile. `read`: a consistent snapshot that writes nothing.
 */
export async function transaction<T>(
  db: Db,
  fn: () => Promise<T>,
  lock: "write" | "queue" | "read" = "write",
): Promise<T> {
  return await run(db, fn, lock);
}

/**
 * A write transaction that reads and writes one namespace's rows only (its documents, memories,
 * search index, dream job): on PostgreSQL it excludes that namespace's writers and schema-wide
 * ones, and writers of other namespaces go on at the same time, so replicas ingesting for different
 * tenants do not take turns; on SQLite it is `transaction` (one writer per file). Opened inside a
 * transaction of another namespace, it takes this one's lock too. At its commit only the search
 * units of the namespaces it locked are indexed: another namespace's writer may be indexing its own
 * meanwhile. A transaction that reads across namespaces (an organization's quota) must be
 * `transaction`.
 */
export async function namespaceTransaction<T>(db: Db, namespaceId: string, fn: () => Promise<T>): Promise<T> {
  return await run(db, fn, { namespaceId });
}

/**
 * A write transaction of a namespace's documents (an add or upsert, a document's chunks), which
 * conflicts with other writers only on the rows both touch: on PostgreSQL it takes no lock of the
 * namespace, so adds and the indexing of other documents of the namespace go on while its memories
 * are committed (row locks order writers of one document; lockName writers of one caller id; the
 * search index locks its spaces at the commit). Everything nested that needs the namespace alone
 * (namespaceTransaction, a store-wide `transaction`) takes its lock then. SQLite: `transaction`.
 */
export async function documentTransaction<T>(
  db: Db,
  /** null: not known yet (a namespace about to be made); the transactions opened inside name theirs. */
  namespaceId: string | null,
  fn: () => Promise<T>,
): Promise<T> {
  return await run(db, fn, { documentsOf: namespaceId });
}

/**
 * Inside a transaction, serializes its writers of `name` (rows that may not exist yet: a caller id
 * about to be written) until it ends. SQLite's transactions exclude every other writer already.
 */
export async function lockName(db: Db, name: string): Promise<void> {
  if (db instanceof PostgresDatabase && db.isTransaction) await db.lockName(name);
}

/**
 * Inside a namespace's transaction, also takes the lock of `namespaceId` (one the transaction
 * created) until it ends, and indexes its units at the commit. SQLite's transactions, and
 * schema-wide ones, exclude every other writer already: nothing to do there.
 */
export async function lockNamespace(db: Db, namespaceId: string): Promise<void> {
  if (db instanceof PostgresDatabase && db.isTransaction) await db.lockNamespace(namespaceId);
}

async function run<T>(db: Db, fn: () => Promise<T>, lock: TransactionLock): Promise<T> {
  // A claim writes only jobs rows, a snapshot nothing: no search index units to index.
  const index =
    lock === "queue" || lock === "read"
      ? undefined
      : async (namespaces: readonly string[] | null) =>
          await indexPending(db, undefined, namespaces ?? undefined);
  return db.transact(lock, fn, index);
}

/** What /health and `memctx serve` say of the database. */
export interface DatabaseState {
  backend: "sqlite" | "postgres";
  /** The file's schema version (its migrations applied). */
  schema: number;
}

/** Which backend a connection is, without asking the database. */
export function databaseBackend(db: Db): DatabaseState["backend"] {
  return db instanceof PostgresDatabase ? "postgres" : "sqlite";
}

/** Reads the schema version: a round trip to the database, so it also says the file is readable. */
export async function databaseState(db: Db): Promise<DatabaseState> {
  if (db instanceof PostgresDatabase) return { backend: "postgres", schema: await db.schemaVersion() };
  const row = (await db.prepare<{ user_version: number }>("PRAGMA user_version").get())!;
  return { backend: "sqlite", schema: row.user_version };
}

export { StoreUnavailableError };

/** SQLite's primary result code for "database or disk is full". */
const SQLITE_FULL = 13;

/**
 * Whether an error means the disk (or the database's page limit) is full: SQLite's SQLITE_FULL
 * (its extended codes keep 13 in the low byte), or ENOSPC from a file write. Nothing about the
 * request was wrong; the same request succeeds once space is freed.
 */
export function isDiskFull(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { errcode?: unknown; code?: unknown };
  return (
    (typeof e.errcode === "number" && (e.errcode & 0xff) === SQLITE_FULL) ||
    e.code === "ENOSPC" ||
    // PostgreSQL's disk_full.
    e.code === "53100"
  );
}

/** A prefixed random service id, e.g. `doc_3kq9...`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

export const now = () => new Date().toISOString();

export const sha256 = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");

/** JSON columns: parse leniently (a bad value reads as the fallback, never throws on a read). */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text == null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
