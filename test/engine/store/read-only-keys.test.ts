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
import { storeConnections, TEST_BACKEND } from "../../support/harness.js";

const connect = storeConnections();

describe("read-only keys in the store", () => {
  it("are stored, read and listed with the key; other keys stay read-write", async () => {
    const db = await connect();
    const readOnly = await createKey(db, LOCAL_ORGANIZATION, ["alice"], { readOnly: true });
    const readWrite = await createKey(db, LOCAL_ORGANIZATION);
    expect(await authenticate(db, readOnly)).toMatchObject({ readOnly: true, namespaces: ["alice"] });
    expect(await authenticate(db, readWrite)).toMatchObject({ readOnly: false, namespaces: null });
    const listed = (await listKeys(db)).map((k) => [k.prefix, Number(k.read_only)]);
    expect(listed).toEqual([
      [readOnly.slice(0, 11), 1],
      [readWrite.slice(0, 11), 0],
    ]);
  });

  it("a key registered again keeps what it was (a restart with MEMCTX_API_KEY cannot widen it)", async () => {
    const db = await connect();
    await registerKey(db, "mk_restarted_key_0123", LOCAL_ORGANIZATION, null, { readOnly: true });
    await registerKey(db, "mk_restarted_key_0123", LOCAL_ORGANIZATION);
    expect((await authenticate(db, "mk_restarted_key_0123"))?.readOnly).toBe(true);
  });

  it("keys written before the migration step are read-write after it", async () => {
    const first = await connect();
    await registerKey(first, "mk_older_key_0123456", LOCAL_ORGANIZATION);
    // Back to before the step (SQLite's 10th, PostgreSQL's 4th): the column gone, and what the later
    // steps made (forgotten sentences, the memories' fact columns, secret screening), as a store of that release.
    await first.exec("ALTER TABLE api_keys DROP COLUMN read_only");
    await first.exec("DROP TABLE forgotten_sentences");
    for (const column of ["subject_kind", "fact_value", "polarity"])
      await first.exec(`ALTER TABLE memories DROP COLUMN ${column}`);
    // The namespaces' memory versions (SQLite's 14th step, PostgreSQL's 9th).
    for (const write of ["insert", "update", "delete"])
      await first.exec(
        `DROP TRIGGER memories_version_${write}${TEST_BACKEND === "sqlite" ? "" : " ON memories"}`,
      );
    await first.exec("DROP TABLE memory_versions");
    if (TEST_BACKEND === "postgres")
      await first.exec("DROP FUNCTION memories_version_written(); DROP FUNCTION memories_version_moved()");
    // The namespace's secret screening and the indexes of what is still being processed.
    await first.exec("ALTER TABLE namespaces DROP COLUMN secret_screening");
    await first.exec("DROP INDEX documents_unindexed");
    await first.exec("DROP INDEX documents_dreaming");
    if (TEST_BACKEND === "sqlite") await first.exec("PRAGMA user_version = 9");
    else await first.exec("UPDATE memctx_schema SET version = 3");
    await first.close();
    const db = await connect();
    expect((await authenticate(db, "mk_older_key_0123456"))?.readOnly).toBe(false);
    expect(Number((await listKeys(db))[0]?.read_only)).toBe(0);
  });
});
