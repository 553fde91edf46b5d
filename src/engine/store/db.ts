import { createHash, randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { migrate } from "./schema.js";

export type Db = DatabaseSync;

export const DATABASE_FILE = "memctx.db";

/**
 * Opens (and migrates) `<dataDir>/memctx.db`: WAL so readers never block the writer and several
 * processes share one file; a busy timeout so they wait for each other instead of failing.
 */
export function openDatabase(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true });
  const db = new DatabaseSync(join(dataDir, DATABASE_FILE), { timeout: 5000 });
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA journal_mode = WAL");
  // NORMAL in WAL mode: a process crash loses nothing committed; only an OS crash or power
  // loss can drop the last transactions. FULL costs an fsync per commit.
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  migrate(db);
  return db;
}

/**
 * Runs `fn` in one write transaction (BEGIN IMMEDIATE takes the write lock up front, so two
 * processes never deadlock upgrading a read lock). `fn` must be synchronous.
 */
export function transaction<T>(db: Db, fn: () => T): T {
  if (db.isTransaction) return fn();
  db.exec("BEGIN IMMEDIATE");
  try {
    const out = fn();
    db.exec("COMMIT");
    return out;
  } catch (err) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw err;
  }
}

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
  return (typeof e.errcode === "number" && (e.errcode & 0xff) === SQLITE_FULL) || e.code === "ENOSPC";
}

/** A prefixed random service id, e.g. `doc_3kq9...`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

export const now = () => new Date().toISOString();

export const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** JSON columns: parse leniently (a bad value reads as the fallback, never throws on a read). */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text == null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
