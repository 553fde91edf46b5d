import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { type Db, openDatabase, transaction } from "../../../src/engine/store/db.js";
import { useWriteLock, withWriteLock, writeLockOf } from "../../../src/engine/store/write-lock.js";
import { tempDir } from "../../support/harness.js";

let dir: ReturnType<typeof tempDir>;
const open: Db[] = [];
afterEach(async () => {
  for (const d of open.splice(0)) await d.close();
  dir?.remove();
});
const connect = async (writeLock?: SharedArrayBuffer) => {
  const db = await openDatabase(dir.path, { writeLock });
  open.push(db);
  return db;
};
const word = (db: Db) => new Int32Array(writeLockOf(db)!)[0]!;

describe("the write lock of one process's connections", () => {
  it("is held for the length of a write transaction, nested ones included, and released after an error", async () => {
    dir = tempDir();
    const db = await connect();
    const seen: number[] = [];
    await transaction(db, async () => {
      seen.push(word(db));
      await transaction(db, async () => seen.push(word(db)));
    });
    expect(seen.every((w) => w !== 0)).toBe(true);
    expect(word(db)).toBe(0);
    await expect(
      transaction(db, async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(word(db)).toBe(0);
  });

  it("is shared by a second connection opened with it, not by one opened alone", async () => {
    dir = tempDir();
    const a = await connect();
    const b = await connect(writeLockOf(a));
    const c = await connect();
    await transaction(a, async () => {
      expect(word(b)).not.toBe(0);
      expect(word(c)).toBe(0);
    });
  });

  it("makes a thread's writer wait for the holder, and take the lock once it is released", async () => {
    dir = tempDir();
    const db = await connect();
    // The thread starts for the lock when told, while this thread holds it.
    const go = new Int32Array(new SharedArrayBuffer(4));
    const code = `
      const { workerData, parentPort } = require("node:worker_threads");
      const lock = new Int32Array(workerData.lock);
      const go = new Int32Array(workerData.go);
      Atomics.wait(go, 0, 0);
      const held = Atomics.load(lock, 0);
      while (Atomics.compareExchange(lock, 0, 0, 99) !== 0) Atomics.wait(lock, 0, Atomics.load(lock, 0));
      const at = Date.now();
      Atomics.store(lock, 0, 0);
      Atomics.notify(lock, 0, 1);
      parentPort.postMessage({ held, at });
    `;
    const thread = new Worker(code, { eval: true, workerData: { lock: writeLockOf(db), go: go.buffer } });
    const got = new Promise<{ held: number; at: number }>((resolve) => thread.once("message", resolve));
    await new Promise((r) => thread.once("online", r));
    let released = 0;
    await transaction(db, async () => {
      Atomics.store(go, 0, 1);
      Atomics.notify(go, 0);
      const t = Date.now();
      while (Date.now() - t < 100);
      released = Date.now();
    });
    const { held, at } = await got;
    await thread.terminate();
    expect(held).not.toBe(0);
    expect(at).toBeGreaterThanOrEqual(released);
    expect(word(db)).toBe(0);
  });

  it("is taken over from a holder that never releases it (a terminated thread), after the wait limit", async () => {
    dir = tempDir();
    const db = await connect();
    const buffer = useWriteLock(db, writeLockOf(db), 50);
    Atomics.store(new Int32Array(buffer), 0, 12345);
    expect(await withWriteLock(db, async () => word(db))).not.toBe(12345);
    // Released by its new holder: the next writer does not wait again.
    expect(word(db)).toBe(0);
  });
});
