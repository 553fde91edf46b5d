/**
 * On PostgreSQL a namespace's write transaction (store/db.ts namespaceTransaction) excludes the
 * writers of that namespace and schema-wide writers, not those of other namespaces: two replicas
 * ingesting for different tenants go on at once. Both connections live on this thread here, so a
 * transaction that waited would wait forever: the connection's lock_timeout turns the wait into
 * an error, which is what "excludes" looks like in this test.
 * On SQLite every write transaction excludes every other (one writer per file): nothing new there.
 * A document whose namespace changed while it was processed (the last test) is refused on both.
 */
import { describe, expect, it } from "vitest";
import { storeDocument } from "../../../src/engine/services/documents.js";
import { deleteNamespace } from "../../../src/engine/services/namespaces.js";
import {
  type Db,
  documentTransaction,
  lockNamespace,
  namespaceTransaction,
  transaction,
} from "../../../src/engine/store/db.js";
import { commitDocumentGeneration } from "../../../src/engine/store/document-commit.js";
import {
  DocumentMovedError,
  getDocumentRow,
  lockedAtGeneration,
} from "../../../src/engine/store/documents.js";
import { insertMemory } from "../../../src/engine/store/memories.js";
import { ensureNamespace, findNamespace } from "../../../src/engine/store/namespaces.js";
import { ensureOrganization } from "../../../src/engine/store/organizations.js";
import { directMemory, storeConnections, TEST_BACKEND } from "../../support/harness.js";

const connect = storeConnections();

/**
 * Two connections to one store; the second gives up waiting for a lock after 300 ms (a statement
 * that runs slowly on a busy machine, without waiting for a lock, keeps the usual limit).
 */
async function twoConnections(): Promise<[Db, Db]> {
  const a = await connect();
  const before = process.env.MEMCTX_PG_LOCK_TIMEOUT_MS;
  process.env.MEMCTX_PG_LOCK_TIMEOUT_MS = "300";
  try {
    return [a, await connect()];
  } finally {
    if (before === undefined) delete process.env.MEMCTX_PG_LOCK_TIMEOUT_MS;
    else process.env.MEMCTX_PG_LOCK_TIMEOUT_MS = before;
  }
}

/** A write; says so, for a transaction's result. */
const touch = async (db: Db) => {
  await db.prepare("UPDATE namespaces SET updated_at = updated_at").run();
  return "written";
};
/** What a processing job indexes for a one-chunk text. */
const chunked = (text: string) => ({
  text,
  format: "plain" as const,
  title: null,
  type: "text",
  url: null,
  chunks: [{ content: text, position: 0, start: 0, end: text.length }],
});
/** A wait for a lock that ran out (StoreUnavailableError: 503 over HTTP). */
const LOCK_TIMEOUT = /time limit/;

describe.skipIf(TEST_BACKEND !== "postgres")("namespace write transactions on PostgreSQL", () => {
  it("go on beside another namespace's, and wait for the same namespace's", async () => {
    const [a, b] = await twoConnections();
    await namespaceTransaction(a, "ns-a", async () => {
      await touch(a);
      expect(await namespaceTransaction(b, "ns-b", () => touch(b))).toBe("written");
      await expect(namespaceTransaction(b, "ns-a", () => touch(b))).rejects.toThrow(LOCK_TIMEOUT);
      // A schema-wide writer waits for every namespace's.
      await expect(transaction(b, () => touch(b))).rejects.toThrow(LOCK_TIMEOUT);
    });
    // Released at commit.
    expect(await namespaceTransaction(b, "ns-a", async () => "after")).toBe("after");
  });

  it("wait while a schema-wide write transaction is open", async () => {
    const [a, b] = await twoConnections();
    await transaction(a, async () => {
      await touch(a);
      await expect(namespaceTransaction(b, "ns-b", () => touch(b))).rejects.toThrow(LOCK_TIMEOUT);
    });
    expect(await namespaceTransaction(b, "ns-b", async () => "after")).toBe("after");
  });

  it("take a nested namespace's lock too, and keep it to the commit", async () => {
    const [a, b] = await twoConnections();
    await namespaceTransaction(a, "ns-a", async () => {
      // A transaction of another namespace opened inside (a dream committed with an index).
      await namespaceTransaction(a, "ns-c", () => touch(a));
      await lockNamespace(a, "ns-d");
      expect(await namespaceTransaction(b, "ns-b", () => touch(b))).toBe("written");
      for (const ns of ["ns-a", "ns-c", "ns-d"])
        await expect(
          namespaceTransaction(b, ns, () => touch(b)),
          ns,
        ).rejects.toThrow(LOCK_TIMEOUT);
    });
    for (const ns of ["ns-a", "ns-c", "ns-d"])
      expect(await namespaceTransaction(b, ns, () => touch(b))).toBe("written");
  });

  it("index the search units of every namespace they locked at the commit, and no other's", async () => {
    const [a] = await twoConnections();
    const org = await ensureOrganization(a, "org");
    const [x, y, z] = [
      await ensureNamespace(a, org.id, "x"),
      await ensureNamespace(a, org.id, "y"),
      await ensureNamespace(a, org.id, "z"),
    ];
    // A unit of z left queued, as a write outside any transaction leaves it.
    await insertMemory(a, directMemory(z.id, "zebra crossing"));
    await namespaceTransaction(a, x.id, async () => {
      await insertMemory(a, directMemory(x.id, "xylophone lessons"));
      await namespaceTransaction(a, y.id, () => insertMemory(a, directMemory(y.id, "yacht club")));
    });
    const pending = async (ns: string) =>
      (
        (await a
          .prepare(
            "SELECT count(*) AS n FROM search_pending p JOIN search_spaces s ON s.id = p.space WHERE s.namespace_id = $1",
          )
          .get(ns)) as { n: number }
      ).n;
    expect([await pending(x.id), await pending(y.id), await pending(z.id)]).toEqual([0, 0, 1]);
  });
});

describe.skipIf(TEST_BACKEND !== "postgres")("document write transactions on PostgreSQL", () => {
  it("add documents while the namespace's memories are being committed", async () => {
    const [a, b] = await twoConnections();
    const org = await ensureOrganization(a, "org");
    const ns = await ensureNamespace(a, org.id, "team");
    await namespaceTransaction(a, ns.id, async () => {
      // A dream's commit: memories written (the namespace's counters, its memory index).
      await insertMemory(a, directMemory(ns.id, "The team ships on Fridays."));
      const added = await storeDocument(b, ns, { content: "Standup moved to 10:00.", customId: "standup" });
      expect(added.status).toBe("queued");
      // ... and the document is indexed meanwhile.
      const generation = (await getDocumentRow(b, added.id))!.generation;
      expect(
        await commitDocumentGeneration(
          b,
          { id: added.id, namespaceId: ns.id },
          generation,
          chunked("Standup moved."),
        ),
      ).toBe("committed");
      // A namespace-wide writer still waits for the namespace's lock.
      await expect(namespaceTransaction(b, ns.id, () => touch(b))).rejects.toThrow(LOCK_TIMEOUT);
    });
    // Both committed, and the counters add up (they are brought up to date at each commit).
    const row = (await findNamespace(a, org.id, "team"))!;
    expect([row.document_count, row.memory_count]).toEqual([1, 1]);
  });

  it("take turns on one caller id, and on one document's indexing", async () => {
    const [a, b] = await twoConnections();
    const org = await ensureOrganization(a, "org");
    const ns = await ensureNamespace(a, org.id, "team");
    const { id } = await storeDocument(a, ns, { content: "v1", customId: "notes" });
    const generation = (await getDocumentRow(a, id))!.generation;
    // As a commit of its generation does, the document's row locked until the commit.
    await documentTransaction(a, ns.id, async () => {
      expect(await lockedAtGeneration(a, { id, namespaceId: ns.id }, generation)).toBeDefined();
      // The same caller id written again waits for this document's indexing (its row is locked)...
      await expect(storeDocument(b, ns, { content: "v2", customId: "notes" })).rejects.toThrow(LOCK_TIMEOUT);
      // ...another document of the namespace does not.
      expect((await storeDocument(b, ns, { content: "other", customId: "other" })).status).toBe("queued");
    });
    // Once committed, the upsert goes through as a new generation, queued again.
    expect(await storeDocument(b, ns, { content: "v2", customId: "notes" })).toEqual({
      id,
      status: "queued",
    });
    expect((await getDocumentRow(b, id))!.generation).toBe(generation + 1);
  });
});

describe.skipIf(TEST_BACKEND !== "postgres")("a transaction PostgreSQL ends to break a deadlock", () => {
  it("is run again from the start, and both writers' work is kept", async () => {
    const a = await connect();
    const b = await connect();
    const org = await ensureOrganization(a, "org");
    const [x, y] = [await ensureNamespace(a, org.id, "x"), await ensureNamespace(a, org.id, "y")];
    const bump = (db: Db, id: string) =>
      db.prepare("UPDATE namespaces SET document_count = document_count + 1 WHERE id = $1").run(id);
    let runsOfA = 0;
    let runsOfB = 0;
    let aHolds!: () => void;
    const aHeld = new Promise<void>((r) => {
      aHolds = r;
    });
    let bHolds!: () => void;
    const bHeld = new Promise<void>((r) => {
      bHolds = r;
    });
    // a holds x and b holds y before either asks for the other's: one of them waits for the other
    // for good until PostgreSQL ends one (after deadlock_timeout, 1 s by default), however the two
    // are scheduled. A run again finds both promises kept and waits only for the other's commit.
    const first = documentTransaction(a, x.id, async () => {
      runsOfA++;
      await bump(a, x.id);
      aHolds();
      await bHeld;
      await bump(a, y.id);
      return "a";
    });
    const second = documentTransaction(b, y.id, async () => {
      runsOfB++;
      await bump(b, y.id);
      bHolds();
      await aHeld;
      await bump(b, x.id);
      return "b";
    });
    expect(await Promise.all([first, second])).toEqual(["a", "b"]);
    const counts = (await a
      .prepare("SELECT document_count AS n FROM namespaces WHERE id IN ($1, $2) ORDER BY name")
      .all(x.id, y.id)) as { n: number }[];
    expect(counts.map((c) => c.n)).toEqual([2, 2]);
    // One of them was ended and run again (on a loaded machine a run may be ended more than once):
    // each committed once in the end, as the counts say.
    expect(runsOfA + runsOfB).toBeGreaterThanOrEqual(3);
  });
});

describe("a document moved to another namespace while it was processed", () => {
  it("is not indexed under its old namespace: the job fails to be tried again", async () => {
    const db = await connect();
    const org = await ensureOrganization(db, "org");
    const from = await ensureNamespace(db, org.id, "from");
    const { id } = await storeDocument(db, from, { content: "Ada moved to Lisbon." });
    const generation = (await getDocumentRow(db, id))!.generation;
    // The job read the document here; then its namespace is deleted, its content moved.
    await deleteNamespace(db, from, "to");
    const indexIn = (namespaceId: string) =>
      commitDocumentGeneration(db, { id, namespaceId }, generation, chunked("Ada moved to Lisbon."));
    await expect(indexIn(from.id)).rejects.toThrow(DocumentMovedError);
    expect((await getDocumentRow(db, id))?.status).toBe("queued");
    // Read again where it is now, it is indexed there.
    expect(await indexIn((await findNamespace(db, org.id, "to"))!.id)).toBe("committed");
  });
});
