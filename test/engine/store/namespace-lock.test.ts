/**
 * On PostgreSQL a namespace's write transaction (store/db.ts namespaceTransaction) excludes the
 * writers of that namespace and schema-wide writers, not those of other namespaces: two replicas
 * ingesting for different tenants go on at once. Both connections live on this thread here, so a
 * transaction that waited would wait forever: the connection's lock_timeout turns the wait into
 * an error, which is what "excludes" looks like in this test.
 * On SQLite every write transaction excludes every other (one writer per file): nothing new there.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  type Db,
  lockScope,
  namespaceTransaction,
  openDatabase,
  transaction,
} from "../../../src/engine/store/db.js";
import { TEST_BACKEND, tempDir, testDatabase } from "../harness.js";

let dir: ReturnType<typeof tempDir> | undefined;
const open: Db[] = [];
afterEach(() => {
  for (const d of open.splice(0)) if (d.isOpen) d.close();
  dir?.remove();
  dir = undefined;
});

/** Two connections to one store; the second gives up on a lock after 300 ms. */
function twoConnections(): [Db, Db] {
  dir = tempDir();
  const a = openDatabase(dir.path, testDatabase());
  const b = openDatabase(dir.path, testDatabase());
  open.push(a, b);
  b.exec("SET lock_timeout = '300ms'");
  return [a, b];
}

/** A write; says so, for a transaction's result. */
const touch = (db: Db) => {
  db.prepare("UPDATE namespaces SET updated_at = updated_at").run();
  return "written";
};
const LOCK_TIMEOUT = /lock timeout/;

describe.skipIf(TEST_BACKEND !== "postgres")("namespace write transactions on PostgreSQL", () => {
  it("go on beside another namespace's, and wait for the same namespace's", { timeout: 20_000 }, () => {
    const [a, b] = twoConnections();
    namespaceTransaction(a, "ns-a", () => {
      touch(a);
      expect(namespaceTransaction(b, "ns-b", () => touch(b))).toBe("written");
      expect(() => namespaceTransaction(b, "ns-a", () => touch(b))).toThrow(LOCK_TIMEOUT);
      // A schema-wide writer waits for every namespace's.
      expect(() => transaction(b, () => touch(b))).toThrow(LOCK_TIMEOUT);
      // A failed begin leaves no transaction open on the connection.
      expect(b.isTransaction).toBe(false);
    });
    // Released at commit.
    expect(namespaceTransaction(b, "ns-a", () => "after")).toBe("after");
  });

  it("wait while a schema-wide write transaction is open", { timeout: 20_000 }, () => {
    const [a, b] = twoConnections();
    transaction(a, () => {
      touch(a);
      expect(() => namespaceTransaction(b, "ns-b", () => touch(b))).toThrow(LOCK_TIMEOUT);
    });
    expect(namespaceTransaction(b, "ns-b", () => "after")).toBe("after");
  });

  it("take turns on a scope both lock (an organization's quota)", { timeout: 20_000 }, () => {
    const [a, b] = twoConnections();
    namespaceTransaction(a, "ns-a", () => {
      lockScope(a, "organization-1");
      expect(() =>
        namespaceTransaction(b, "ns-b", () => {
          lockScope(b, "organization-2");
          lockScope(b, "organization-1");
        }),
      ).toThrow(LOCK_TIMEOUT);
      expect(b.isTransaction).toBe(false);
      // Rolled back: the connection takes the next transaction as usual.
      const again = namespaceTransaction(b, "ns-b", () => {
        lockScope(b, "organization-2");
        return touch(b);
      });
      expect(again).toBe("written");
    });
  });
});
