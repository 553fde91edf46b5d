import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
// The connection type from connection.ts, not db.ts (which opens the key store: no import loop).
import type { Db } from "./connection.js";

/**
 * Secrets at rest (connector tokens and API keys): AES-256-GCM with a key kept outside the
 * database, so a copy of the database file alone (a backup, a shared volume, a bug report) does
 * not hand out access to a user's sources.
 *
 * The key is `MEMCTX_SECRET_KEY` (base64 of 32 bytes is used as is; any other string is hashed
 * with SHA-256 to 32 bytes), else `<data dir>/secret.key`, created 0600 on first use. A value is
 * stored as `enc:v1:<iv>:<ciphertext + tag>` (base64url), bound to its row and column, so a
 * sealed value copied to another row does not open. A value without that prefix was written
 * before encryption and is read as it is; the next write seals it.
 */

export const SECRET_KEY_FILE = "secret.key";
const PREFIX = "enc:v1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The key cannot open a sealed value: it is not the key the value was written with. */
export class SecretKeyError extends Error {
  override name = "SecretKeyError";
}

interface KeySource {
  dataDir: string;
  env: NodeJS.ProcessEnv;
  key?: Buffer;
}
const sources = new WeakMap<Db, KeySource>();

/** Called once per connection by openDatabase: where this database's secret key comes from. */
export function useSecretKey(db: Db, dataDir: string, env: NodeJS.ProcessEnv = process.env): void {
  sources.set(db, { dataDir, env });
}

/** The key of MEMCTX_SECRET_KEY: 32 bytes in base64 as they are, anything else hashed to 32 bytes. */
export function keyFromString(value: string): Buffer {
  const raw = /^[A-Za-z0-9+/_-]{43}=?$/.test(value) ? Buffer.from(value, "base64") : undefined;
  return raw?.length === 32 ? raw : createHash("sha256").update(value, "utf8").digest();
}

function keyOf(db: Db): Buffer {
  const source = sources.get(db);
  if (!source) throw new Error("no secret key source for this database (open it with openDatabase)");
  source.key ??= loadKey(source);
  return source.key;
}

function loadKey({ dataDir, env }: KeySource): Buffer {
  if (env.MEMCTX_SECRET_KEY) return keyFromString(env.MEMCTX_SECRET_KEY);
  const file = join(dataDir, SECRET_KEY_FILE);
  try {
    // Exclusive create: of two processes opening a new data directory, one writes the key and
    // the other reads it.
    writeFileSync(file, `${randomBytes(32).toString("base64")}\n`, { flag: "wx", mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  if (key.length !== 32) throw new SecretKeyError(`${file} does not hold a base64 key of 32 bytes`);
  return key;
}

/** Seals `plaintext` for the place it is stored (`context`, e.g. `connectors.credentials:con_…`). */
export function sealSecret(db: Db, context: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keyOf(db), iv);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}${iv.toString("base64url")}:${sealed.toString("base64url")}`;
}

/** Whether a stored value is sealed (else it was written before encryption, as plain text). */
export const isSealed = (stored: string) => stored.startsWith(PREFIX);

/** Opens a value sealed by sealSecret for the same `context`; a plain (older) value comes back as it is. */
export function openSecret(db: Db, context: string, stored: string): string {
  if (!isSealed(stored)) return stored;
  const [iv, sealed] = stored.slice(PREFIX.length).split(":") as [string, string | undefined];
  const bytes = Buffer.from(sealed ?? "", "base64url");
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(db), Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  } catch (err) {
    if (err instanceof SecretKeyError) throw err;
    throw new SecretKeyError(
      `a stored secret (${context.split(":")[0]}) does not open with this secret key: set MEMCTX_SECRET_KEY ` +
        `to the key it was written with, or restore ${SECRET_KEY_FILE} in the data directory`,
    );
  }
}
