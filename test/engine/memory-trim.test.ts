/**
 * A thread's heap grown by a busy spell is given back once the spell is over (memory-trim.ts):
 * here the rule that decides when, window by window, and that the trim itself runs. How much it
 * gives back is a figure for bench/memory-trim.ts, not a test (resident memory depends on the
 * machine and on what else runs).
 */
import { describe, expect, it } from "vitest";
import { busySpells, trimHeap } from "../../src/engine/memory-trim.js";

/** The windows after which a trim runs, for a sequence of event-loop utilizations. */
const trimsAfter = (windows: number[]): number[] => {
  const spells = busySpells();
  return windows.flatMap((u, i) => (spells.afterWindow(u) ? [i] : []));
};

describe("trimming a thread's heap after a busy spell", () => {
  it("trims once, at the first quiet window after a busy one", () => {
    expect(trimsAfter([0.9, 0.6, 0.3, 0.01, 0.01, 0.01])).toEqual([3]);
  });

  it("never trims a thread that was never busy, nor one that stays busy", () => {
    expect(trimsAfter([0.01, 0.1, 0.15, 0.0, 0.19])).toEqual([]);
    expect(trimsAfter([0.5, 0.9, 0.3, 0.25, 0.8])).toEqual([]);
  });

  it("waits through half-quiet windows: only a window at most 5% busy ends the spell", () => {
    expect(trimsAfter([0.5, 0.1, 0.08, 0.06, 0.05])).toEqual([4]);
  });

  it("does not count the window after a trim, whatever it shows, and trims once per spell", () => {
    // The trim's own pause and finalizers make the next window look busy: not a new spell.
    expect(trimsAfter([0.5, 0.0, 0.4, 0.0, 0.0])).toEqual([1]);
    // A later spell gets its own trim.
    expect(trimsAfter([0.5, 0.0, 0.0, 0.7, 0.0])).toEqual([1, 4]);
  });

  it("runs V8's memory-reducing collection without --expose-gc", () => {
    expect(trimHeap()).toBe(true);
  });
});
