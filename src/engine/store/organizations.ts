import { randomBytes } from "node:crypto";
import { ORGANIZATION_BUCKET_PREFERENCES } from "../../api/limits.js";
import { BUSY_TIMEOUT_MS, type Db, newId, now, parseJson, sha256, transaction } from "./db.js";
import { SqliteDatabase } from "./sqlite.js";
import { statement } from "./statements.js";

/** The organization of the embedded engine and of keys created without --org. */
export const LOCAL_ORGANIZATION = "local";

const PREFERENCES_DESCRIPTION =
  "Preferences: likes and dislikes, habits, tools and ways of working the user prefers.";

export interface OrganizationRow {
  id: string;
  name: string;
  organizational_context: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyRow {
  id: string;
  organization_id: string;
  organization: string;
  prefix: string;
  namespaces: string | null;
  /** 1: the key may only read. */
  read_only: number;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** What a valid key grants: its organization, the namespaces it may use (null: all), and whether it may write. */
export interface Principal {
  keyId: string;
  organization: OrganizationRow;
  namespaces: string[] | null;
  readOnly: boolean;
}

/** A new key's restriction beyond its organization and namespaces: it may only read. */
export interface KeyScope {
  readOnly?: boolean;
}

export async function getOrganization(db: Db, id: string): Promise<OrganizationRow | undefined> {
  return await statement<OrganizationRow>(db, "SELECT * FROM organizations WHERE id = $1").get(id);
}

/** The organization named `name`, created (with its `preferences` bucket) when missing. */
export async function ensureOrganization(db: Db, name: string): Promise<OrganizationRow> {
  const existing = await statement<OrganizationRow>(db, "SELECT * FROM organizations WHERE name = $1").get(
    name,
  );
  if (existing) return existing;
  return await transaction(db, async () => {
    const t = now();
    const id = newId("org");
    const inserted = await statement(
      db,
      "INSERT INTO organizations (id, name, created_at, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT(name) DO NOTHING",
    ).run(id, name, t, t);
    if (inserted.changes) {
      await statement(
        db,
        `INSERT INTO profile_buckets (organization_id, namespace_id, name, description, created_at, updated_at)
         VALUES ($1, NULL, $2, $3, $4, $5)`,
      ).run(id, ORGANIZATION_BUCKET_PREFERENCES, PREFERENCES_DESCRIPTION, t, t);
    }
    return (await statement<OrganizationRow>(db, "SELECT * FROM organizations WHERE name = $1").get(name))!;
  });
}

export async function setOrganizationalContext(db: Db, id: string, context: string | null): Promise<void> {
  await statement(
    db,
    "UPDATE organizations SET organizational_context = $1, updated_at = $2 WHERE id = $3",
  ).run(context, now(), id);
}

const KEY_PREFIX_LENGTH = 11; // "mk_" + 8 characters: enough to name a key, useless to guess it

/**
 * The part of a key kept to name it: its first 11 characters, but never more than a third of
 * it, so that a short key given through MEMCTX_API_KEY is not stored whole.
 */
export const keyPrefix = (key: string) =>
  key.slice(0, Math.min(KEY_PREFIX_LENGTH, Math.floor(key.length / 3)));

/**
 * Older versions stored a key of 11 characters or fewer whole as its prefix: cut those down.
 * A prefix is the whole key exactly when it hashes to the key's hash. Returns how many changed.
 */
export async function trimWholeKeyPrefixes(db: Db): Promise<number> {
  const rows = await statement<{ id: string; prefix: string; key_hash: string }>(
    db,
    `SELECT id, prefix, key_hash FROM api_keys WHERE length(prefix) <= ${KEY_PREFIX_LENGTH}`,
  ).all();
  const whole = rows.filter((r) => sha256(r.prefix) === r.key_hash);
  const update = statement(db, "UPDATE api_keys SET prefix = $1 WHERE id = $2");
  for (const r of whole) await update.run(keyPrefix(r.prefix), r.id);
  return whole.length;
}

/** How many of the organization's namespaces exist, of `allowed` only when given (a restricted key). */
export async function countNamespaces(
  db: Db,
  organizationId: string,
  allowed: string[] | null,
): Promise<number> {
  const filter = allowed ? ` AND ${db.dialect.isIn("name", "$2", "text")}` : "";
  const args = allowed ? [organizationId, db.dialect.list(allowed)] : [organizationId];
  return (await statement<{ n: number }>(
    db,
    `SELECT count(*) AS n FROM namespaces WHERE organization_id = $1${filter}`,
  ).get(...args))!.n;
}

/** A fresh bearer key for `organization`; only its hash is stored. */
export async function createKey(
  db: Db,
  organization: string,
  namespaces: string[] | null = null,
  scope: KeyScope = {},
): Promise<string> {
  const key = `mk_${randomBytes(24).toString("base64url")}`;
  await registerKey(db, key, organization, namespaces, scope);
  return key;
}

/**
 * Makes a new `key` valid for `organization`. Idempotent: a key already known keeps its
 * organization, its namespace restriction and its revocation (a restart with MEMCTX_API_KEY must
 * not undo `memctx keys revoke`, nor widen a restricted key).
 */
export async function registerKey(
  db: Db,
  key: string,
  organization: string,
  namespaces: string[] | null = null,
  scope: KeyScope = {},
) {
  if (key.length < 8) throw new Error("an API key must be at least 8 characters");
  const org = await ensureOrganization(db, organization);
  await statement(
    db,
    `INSERT INTO api_keys (id, organization_id, key_hash, prefix, namespaces, read_only, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT(key_hash) DO NOTHING`,
  ).run(
    newId("key"),
    org.id,
    sha256(key),
    keyPrefix(key),
    namespaces ? JSON.stringify(namespaces) : null,
    scope.readOnly ? 1 : 0,
    now(),
  );
}

/**
 * How stale a key's `last_used_at` may get: it is written at most once a minute per key, so that
 * reads do not each cost a write (and a lock shared with the other processes on the file).
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** When each key's use was last tried on a connection that found the database busy. */
const busySince = new WeakMap<Db, Map<string, number>>();

/**
 * Writes a key's last use without waiting for the write lock: bookkeeping must neither turn a
 * valid key away nor make a read wait behind a long write (a document's processing). A busy
 * attempt is not tried again on this connection for LAST_USED_RESOLUTION_MS.
 */
async function recordUse(db: Db, keyId: string, at: string): Promise<void> {
  const tried = busySince.get(db) ?? new Map<string, number>();
  busySince.set(db, tried);
  if (Date.parse(at) - (tried.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
  const update = statement(db, "UPDATE api_keys SET last_used_at = $1 WHERE id = $2");
  try {
    if (db instanceof SqliteDatabase) {
      // SQLite: without a wait for another process's write lock, all three at once (no other
      // statement of this connection runs with the busy timeout off).
      await db.turn(() => {
        db.raw.exec("PRAGMA busy_timeout = 0");
        try {
          db.raw.prepare("UPDATE api_keys SET last_used_at = $1 WHERE id = $2").run({ $1: at, $2: keyId });
        } finally {
          db.raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
        }
      });
    } else await update.run(at, keyId);
    tried.delete(keyId);
  } catch {
    tried.set(keyId, Date.parse(at));
  }
}

/** The principal of a valid, unrevoked key; undefined for anything else. Records when it was used. */
export async function authenticate(db: Db, key: string): Promise<Principal | undefined> {
  const row = await statement<
    OrganizationRow & {
      key_id: string;
      namespaces: string | null;
      key_read_only: number;
      last_used_at: string | null;
    }
  >(
    db,
    `SELECT k.id AS key_id, k.namespaces, k.read_only AS key_read_only, k.last_used_at, o.* FROM api_keys k
       JOIN organizations o ON o.id = k.organization_id
       WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
  ).get(sha256(key));
  if (!row) return undefined;
  const { key_id, namespaces, key_read_only, last_used_at, ...organization } = row;
  const at = now();
  if (!last_used_at || Date.parse(at) - Date.parse(last_used_at) >= LAST_USED_RESOLUTION_MS) {
    await recordUse(db, key_id, at);
  }
  return {
    keyId: key_id,
    organization,
    namespaces: parseJson<string[] | null>(namespaces, null),
    readOnly: Number(key_read_only) === 1,
  };
}

export async function listKeys(db: Db): Promise<ApiKeyRow[]> {
  return await statement<ApiKeyRow>(
    db,
    `SELECT k.id, k.organization_id, o.name AS organization, k.prefix, k.namespaces, k.read_only,
              k.created_at, k.last_used_at, k.revoked_at
       FROM api_keys k JOIN organizations o ON o.id = k.organization_id ORDER BY k.created_at`,
  ).all();
}

export async function countKeys(db: Db, organization: string): Promise<number> {
  const row = (await statement<{ n: number }>(
    db,
    `SELECT count(*) AS n FROM api_keys k JOIN organizations o ON o.id = k.organization_id
       WHERE o.name = $1 AND k.revoked_at IS NULL`,
  ).get(organization))!;
  return row.n;
}

/**
 * Revokes the key given in full, or the one key whose prefix is given. Returns the revoked key's
 * prefix; throws when nothing or more than one key matches.
 */
export async function revokeKey(db: Db, prefixOrKey: string): Promise<string> {
  const byHash = await statement<{ id: string; prefix: string }>(
    db,
    "SELECT id, prefix FROM api_keys WHERE key_hash = $1",
  ).get(sha256(prefixOrKey));
  const matches = byHash
    ? [byHash]
    : await statement<{ id: string; prefix: string }>(
        db,
        "SELECT id, prefix FROM api_keys WHERE revoked_at IS NULL AND substr(prefix, 1, $1) = $2",
      ).all(prefixOrKey.length, prefixOrKey);
  if (matches.length === 0) throw new Error(`no active key matches '${prefixOrKey}'`);
  if (matches.length > 1) throw new Error(`'${prefixOrKey}' matches ${matches.length} keys; give more of it`);
  const m = matches[0]!;
  await statement(db, "UPDATE api_keys SET revoked_at = $1 WHERE id = $2").run(now(), m.id);
  return m.prefix;
}
