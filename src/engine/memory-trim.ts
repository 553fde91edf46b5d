/**
 * Gives a thread's heap back to the system once a busy spell is over. Under load V8 grows the
 * heap (the young generation's semi-spaces, old-space pages for what was promoted) and keeps those
 * pages resident after an ordinary GC has emptied them: only a memory-reducing full GC (the one
 * V8 runs under memory pressure) unmaps them. Measured with bench/rss-after-load.ts: 16 clients
 * for 40 s took a `memctx serve` child from 254 to 452 MiB, 180 MiB of it in V8's pages, and it
 * stayed there; the main thread's heapUsed after a GC was back at its start (nothing retained).
 *
 * So each thread that serves or processes watches its own event-loop utilization: after a window
 * that was busy, the first quiet one runs that GC once. It pauses the thread once per busy spell, and
 * only when it has gone quiet: about 150 ms with 40 MB live in a micro test, and /health's slowest
 * answer after the bench's load was 220-625 ms on a 2-core machine shared with other jobs (60 ms
 * without trimming), the serving thread's heap then 150-270 MiB.
 */
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** How often a thread looks at how busy it was. */
export const TRIM_WINDOW_MS = 5_000;
/** A window this busy (share of the time the event loop ran) marks a busy spell. */
const BUSY_UTILIZATION = 0.2;
/** A window at most this busy after a busy spell ends it: the heap is trimmed. */
const QUIET_UTILIZATION = 0.05;

type Gc = (options?: {
  type?: "major" | "minor";
  execution?: "sync" | "async";
  flavor?: "last-resort";
}) => void;
let gc: Gc | null | undefined;

/**
 * V8's gc(), without starting node with --expose-gc: the flag is set for one new context, which
 * exposes the function, and unset again so that no later context (a library's vm) sees it.
 */
function exposedGc(): Gc | null {
  if (gc !== undefined) return gc;
  // Started with --expose-gc (a test runner): its gc, and the flag left as it was.
  const own = (globalThis as { gc?: Gc }).gc;
  if (typeof own === "function") {
    gc = own;
    return gc;
  }
  try {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as Gc;
  } catch {
    gc = null;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
  return gc;
}

/** A full GC that also unmaps the heap's free pages ("last-resort": V8's memory-pressure collection). */
export function trimHeap(): boolean {
  const collect = exposedGc();
  if (!collect) return false;
  collect({ type: "major", execution: "sync", flavor: "last-resort" });
  return true;
}

/**
 * The rule, apart from the clock: given each window's event-loop utilization, whether to trim now.
 * A window at least BUSY_UTILIZATION busy starts a spell; the first window after it at most
 * QUIET_UTILIZATION busy ends it with one trim; the window after a trim is not read (the trim and
 * the finalizers it leaves are no busy spell of their own).
 */
export function busySpells(): { afterWindow(utilization: number): boolean } {
  let busy = false;
  let justTrimmed = false;
  return {
    afterWindow(utilization) {
      if (justTrimmed) justTrimmed = false;
      else if (utilization >= BUSY_UTILIZATION) busy = true;
      else if (busy && utilization <= QUIET_UTILIZATION) {
        busy = false;
        justTrimmed = true;
        return true;
      }
      return false;
    },
  };
}

/** Trims this thread's heap after each busy spell (see above); `stop` ends the watch. */
export function trimAfterBusySpells(opts: { windowMs?: number; onTrim?: () => void } = {}): { stop(): void } {
  const spells = busySpells();
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    if (spells.afterWindow(utilization)) {
      if (trimHeap()) opts.onTrim?.();
      last = performance.eventLoopUtilization();
    }
  }, opts.windowMs ?? TRIM_WINDOW_MS);
  // Never what keeps a process or thread alive.
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
