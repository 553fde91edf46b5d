/**
 * A key's read-only flag in the store, on the test backend (SQLite, or PostgreSQL with
 * MEMCTX_TEST_DATABASE_URL): stored with the key, read with it, listed, kept when the key is
 * registered again, and a store written before the flag (one step back) keeps its keys read-write.
 */
import { describe, expect, it } from "vitest";
import {
  authenticate,
  createKey,
  LOCAL_ORGANIZATION,
  listKeys,
  registerKey,
} from "../../../src/engine/store/organizations.js";
import { PG_SCHEMA_VERSION } from "../../../src/engine/store/postgres/schema.js";
import { SCHEMA_VERSION } from "../../../src/engine/store/schema.js";
import { storeConnections, TEST_BACKEND } from "../harness.js";

const connect = storeConnections();

describe("read-only keys in the store", () => {
  it("are stored, read and listed with the key; other keys stay read-write", () => {
    const db = connect();
    const readOnly = createKey(db, LOCAL_ORGANIZATION, ["alice"], { readOnly: true });
    const readWrite = createKey(db, LOCAL_ORGANIZATION);
    expect(authenticate(db, readOnly)).toMatchObject({ readOnly: true, namespaces: ["alice"] });
    expect(authenticate(db, readWrite)).toMatchObject({ readOnly: false, namespaces: null });
    const listed = listKeys(db).map((k) => [k.prefix, Number(k.read_only)]);
    expect(listed).toEqual([
      [readOnly.slice(0, 11), 1],
      [readWrite.slice(0, 11), 0],
    ]);
  });

  it("a key registered again keeps what it was (a restart with MEMCTX_API_KEY cannot widen it)", () => {
    const db = connect();
    registerKey(db, "mk_restarted_key_0123", LOCAL_ORGANIZATION, null, { readOnly: true });
    registerKey(db, "mk_restarted_key_0123", LOCAL_ORGANIZATION);
    expect(authenticate(db, "mk_restarted_key_0123")?.readOnly).toBe(true);
  });

  it("keys written before the migration step are read-write after it", () => {
    const first = connect();
    registerKey(first, "mk_older_key_0123456", LOCAL_ORGANIZATION);
    // One step back: the column gone and the version before it, as a store of the last release.
    first.exec("ALTER TABLE api_keys DROP COLUMN read_only");
    if (TEST_BACKEND === "sqlite") first.exec(`PRAGMA user_version = ${SCHEMA_VERSION - 1}`);
    else first.exec(`UPDATE memctx_schema SET version = ${PG_SCHEMA_VERSION - 1}`);
    first.close();
    const db = connect();
    expect(authenticate(db, "mk_older_key_0123456")?.readOnly).toBe(false);
    expect(Number(listKeys(db)[0]?.read_only)).toBe(0);
  });
});
