import { threadId } from "node:worker_threads";
import type { Db } from "./connection.js";

/**
 * The connections of one process to one database file (the engine's and its processing threads')
 * take turns at writing through this lock before they ask SQLite for its own. SQLite's busy
 * handler polls: a connection that finds the file locked sleeps 1, 2, 5, 10... ms before it tries
 * again, however soon the holder commits. A waiter here wakes the moment the holder releases.
 * (Measured under ingest: the engine's adds waited 18 ms in all for 1,000 transactions; a thread
 * waits as long as the other's dream commit takes.)
 *
 * The lock only orders writers; SQLite's lock still guards the file (other processes share it with
 * their busy timeout). So a waiter that has waited `WAIT_LIMIT_MS` takes the lock over and goes on
 * to SQLite's lock, which decides: a thread terminated while it held the lock never releases it,
 * and costs the next writer one wait, not every writer one each.
 */
const locks = new WeakMap<Db, { word: Int32Array; waitLimitMs: number }>();

const FREE = 0;
/** The holder's mark: its thread's id + 1 (the main thread's id is 0). */
const ME = threadId + 1;
const WAIT_LIMIT_MS = 5_000;

/**
 * Gives `db` the lock in `shared` (made by another connection of this process to the same file),
 * or a new one. Returns the lock's buffer, to hand to the next connection (a thread's).
 */
export function useWriteLock(
  db: Db,
  shared?: SharedArrayBuffer,
  waitLimitMs = WAIT_LIMIT_MS,
): SharedArrayBuffer {
  const buffer = shared ?? new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  locks.set(db, { word: new Int32Array(buffer), waitLimitMs });
  return buffer;
}

/** The buffer of the lock `db` writes under, to share with a thread that opens the same file. */
export function writeLockOf(db: Db): SharedArrayBuffer | undefined {
  return locks.get(db)?.word.buffer as SharedArrayBuffer | undefined;
}

/**
 * Runs `fn` (which takes SQLite's write lock) once this process's other writers are done. The wait
 * is asynchronous (Atomics.waitAsync): the thread answers requests meanwhile.
 */
export async function withWriteLock<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  const lock = locks.get(db);
  if (!lock) return fn();
  await acquire(lock.word, lock.waitLimitMs);
  try {
    return await fn();
  } finally {
    // Not released if a waiter took it over meanwhile: it is that waiter's now.
    if (Atomics.compareExchange(lock.word, 0, ME, FREE) === ME) Atomics.notify(lock.word, 0, 1);
  }
}

async function acquire(lock: Int32Array, waitLimitMs: number): Promise<void> {
  const deadline = Date.now() + waitLimitMs;
  for (;;) {
    const holder = Atomics.compareExchange(lock, 0, FREE, ME);
    if (holder === FREE) return;
    const left = deadline - Date.now();
    if (left <= 0) {
      Atomics.store(lock, 0, ME);
      return;
    }
    const wait = Atomics.waitAsync(lock, 0, holder, left);
    if (wait.async) await wait.value;
  }
}
