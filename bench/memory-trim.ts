/**
 * What trimming a thread's heap after a busy spell gives back (src/engine/memory-trim.ts):
 *   npx tsx bench/memory-trim.ts [--runs 3]
 * Each run is two real child processes that allocate for 1.5 s (garbage, the way a load of
 * requests does), then go quiet for 2 s: one with the trimmer, one without. Prints resident memory
 * (MiB) at start, at the peak and after the quiet seconds, and how many trims ran. Expected: with
 * the trimmer, more than half of the growth given back, by one trim; without it, less than half.
 * (A figure, not a test: resident memory depends on the machine and on what else runs.)
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { ROOT } from "./suite/common.js";

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

const { values } = parseArgs({ options: { runs: { type: "string", default: "3" } } });
const growth = (s: Spell) => s.peak - s.base;
const givenBack = (s: Spell) => s.peak - s.after;
for (let run = 1; run <= Number(values.runs); run++) {
  const kept = await spell(false);
  const trimmed = await spell(true);
  for (const [name, s] of [
    ["without trimmer", kept],
    ["with trimmer", trimmed],
  ] as const)
    console.log(
      `run ${run} ${name.padEnd(15)} start ${s.base} MiB, peak ${s.peak} MiB, after ${s.after} MiB: ` +
        `${givenBack(s)} of ${growth(s)} MiB given back (${Math.round((100 * givenBack(s)) / Math.max(1, growth(s)))}%), ${s.trims} trim(s)`,
    );
}
