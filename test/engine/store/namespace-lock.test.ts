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
import { type Db, lockNamespace, namespaceTransaction, transaction } from "../../../src/engine/store/db.js";
import {
  addDocument,
  DocumentMovedError,
  getDocumentRow,
  indexDocument,
} from "../../../src/engine/store/documents.js";
import { insertMemory } from "../../../src/engine/store/memories.js";
import { deleteNamespace, ensureNamespace, findNamespace } from "../../../src/engine/store/namespaces.js";
import { ensureOrganization } from "../../../src/engine/store/organizations.js";
import { directMemory, storeConnections, TEST_BACKEND } from "../harness.js";

const connect = storeConnections();

/** Two connections to one store; the second gives up on a lock after 300 ms. */
function twoConnections(): [Db, Db] {
  const a = connect();
  const b = connect();
  b.exec("SET lock_timeout = '300ms'");
  return [a, b];
}

/** A write; says so, for a transaction's result. */
const touch = async (db: Db) => {
  (await db.prepare("UPDATE namespaces SET updated_at = updated_at").run());
  return "written";
};
const LOCK_TIMEOUT = /lock timeout/;

describe.skipIf(TEST_BACKEND !== "postgres")("namespace write transactions on PostgreSQL", () => {
  it("go on beside another namespace's, and wait for the same namespace's", { timeout: 20_000 }, async () => {
    const [a, b] = twoConnections();
    (await namespaceTransaction(a, "ns-a", async () => {
      touch(a);
      expect((await namespaceTransaction(b, "ns-b", () => touch(b)))).toBe("written");
      expect(async () => (await namespaceTransaction(b, "ns-a", () => touch(b)))).toThrow(LOCK_TIMEOUT);
      // A schema-wide writer waits for every namespace's.
      expect(async () => (await transaction(b, () => touch(b)))).toThrow(LOCK_TIMEOUT);
      // A failed begin leaves no transaction open on the connection.
      expect(b.isTransaction).toBe(false);
    }));
    // Released at commit.
    expect((await namespaceTransaction(b, "ns-a", () => "after"))).toBe("after");
  });

  it("wait while a schema-wide write transaction is open", { timeout: 20_000 }, async () => {
    const [a, b] = twoConnections();
    (await transaction(a, () => {
      touch(a);
      expect(async () => (await namespaceTransaction(b, "ns-b", () => touch(b)))).toThrow(LOCK_TIMEOUT);
    }));
    expect((await namespaceTransaction(b, "ns-b", () => "after"))).toBe("after");
  });

  it("take a nested namespace's lock too, and keep it to the commit", { timeout: 20_000 }, async () => {
    const [a, b] = twoConnections();
    (await namespaceTransaction(a, "ns-a", async () => {
      // A transaction of another namespace opened inside (a dream committed with an index).
      (await namespaceTransaction(a, "ns-c", () => touch(a)));
      (await lockNamespace(a, "ns-d"));
      expect((await namespaceTransaction(b, "ns-b", () => touch(b)))).toBe("written");
      for (const ns of ["ns-a", "ns-c", "ns-d"])
        expect(async () => (await namespaceTransaction(b, ns, () => touch(b))), ns).toThrow(LOCK_TIMEOUT);
      expect(b.isTransaction).toBe(false);
    }));
    for (const ns of ["ns-a", "ns-c", "ns-d"])
      expect((await namespaceTransaction(b, ns, () => touch(b)))).toBe("written");
  });

  it("index the search units of every namespace they locked at the commit, and no other's", {
    timeout: 20_000,
  }, async () => {
    const [a] = twoConnections();
    const org = (await ensureOrganization(a, "org"));
    const [x, y, z] = ["x", "y", "z"].map(async (n) => (await ensureNamespace(a, org.id, n)));
    // A unit of z left queued, as a write outside any transaction leaves it.
    a.exec("BEGIN");
    (await insertMemory(a, directMemory(z!.id, "zebra crossing")));
    a.exec("COMMIT");
    (await namespaceTransaction(a, x!.id, async () => {
      (await insertMemory(a, directMemory(x!.id, "xylophone lessons")));
      (await namespaceTransaction(a, y!.id, async () => (await insertMemory(a, directMemory(y!.id, "yacht club")))));
    }));
    const pending = async (ns: string) =>
      (
        (await a
          .prepare(
            "SELECT count(*) AS n FROM search_pending p JOIN search_spaces s ON s.id = p.space WHERE s.namespace_id = ?",
          )
          .get(ns)) as { n: number }
      ).n;
    expect([(await pending(x!.id)), (await pending(y!.id)), (await pending(z!.id))]).toEqual([0, 0, 1]);
  });
});

describe("a document moved to another namespace while it was processed", () => {
  it("is not indexed under its old namespace: the job fails to be tried again", async () => {
    const db = connect();
    const org = (await ensureOrganization(db, "org"));
    const from = (await ensureNamespace(db, org.id, "from"));
    const { id } = (await addDocument(db, from, { content: "Ada moved to Lisbon." }));
    const generation = (await getDocumentRow(db, id))!.generation;
    // The job read the document here; then its namespace is deleted, its content moved.
    (await deleteNamespace(db, from, "to"));
    const text = "Ada moved to Lisbon.";
    const indexed = {
      text,
      format: "plain" as const,
      title: null,
      type: "text",
      url: null,
      chunks: [{ content: text, position: 0, start: 0, end: text.length }],
    };
    const indexIn = (namespaceId: string) => async () =>
      (await indexDocument(db, { id, namespaceId }, generation, indexed));
    expect(indexIn(from.id)).toThrow(DocumentMovedError);
    expect((await getDocumentRow(db, id))?.status).toBe("queued");
    // Read again where it is now, it is indexed there.
    expect(indexIn((await findNamespace(db, org.id, "to"))!.id)()).toBe(true);
  });
});
