/**
 * A thread's heap grown by a busy spell is given back once the spell is over (memory-trim.ts).
 * Each case is a real child process that allocates for a while (garbage, the way a load of
 * requests does), then goes quiet: with the trimmer its resident memory falls back, once; without
 * it, the same spell leaves it where it peaked (V8 keeps the pages it emptied).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/harness.js";

const run = promisify(execFile);

interface Spell {
  base: number;
  peak: number;
  after: number;
  trims: number;
}

/** One busy spell of 1.5 s in a child, then 2 s quiet; resident memory in MiB at each end. */
async function spell(trim: boolean): Promise<Spell> {
  const script = `
    import { trimAfterBusySpells } from ${JSON.stringify(join(ROOT, "src/engine/memory-trim.ts"))};
    const rss = () => Math.round(process.memoryUsage().rss / 1048576);
    let trims = 0;
    if (${trim}) trimAfterBusySpells({ windowMs: 250, onTrim: () => trims++ });
    const base = rss();
    let keep = [];
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      // In slices, so that the trimmer's timer sees a busy event loop, not a blocked one.
      const slice = Date.now() + 20;
      while (Date.now() < slice) {
        for (let i = 0; i < 10000; i++) {
          const o = { a: i, b: "x" + i, c: [i, i] };
          if (i % 20 === 0) keep.push(o);
        }
        if (keep.length > 300000) keep = [];
      }
      await new Promise((r) => setImmediate(r));
    }
    keep = null;
    const peak = rss();
    await new Promise((r) => setTimeout(r, 2000));
    console.log(JSON.stringify({ base, peak, after: rss(), trims }));
  `;
  const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
  });
  return JSON.parse(stdout.trim().split("\n").pop()!) as Spell;
}

describe("trimming a thread's heap after a busy spell", () => {
  it("gives back most of what the spell grew, once, and only with the trimmer", async () => {
    const kept = await spell(false);
    const trimmed = await spell(true);
    // The spell grows the heap by far more than noise (both runs).
    expect(kept.peak - kept.base, JSON.stringify(kept)).toBeGreaterThan(60);
    expect(trimmed.peak - trimmed.base, JSON.stringify(trimmed)).toBeGreaterThan(60);
    // Without trimming, the quiet seconds give little back; with it, at least half of the growth.
    expect(kept.peak - kept.after, JSON.stringify(kept)).toBeLessThan((kept.peak - kept.base) / 2);
    expect(trimmed.peak - trimmed.after, JSON.stringify(trimmed)).toBeGreaterThan(
      (trimmed.peak - trimmed.base) / 2,
    );
    expect(trimmed.trims).toBe(1);
  });
});
