import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient } from "../../../src/client/index.js";
import { type Engine, openEngine } from "../../../src/engine/index.js";
import {
  postingRows,
  type ScoredUnit,
  searchSpace,
  topUnits,
} from "../../../src/engine/store/search-index.js";
import { TEST_KEY, tempDir } from "../harness.js";

let dir: ReturnType<typeof tempDir>;
let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
  dir?.remove();
});

const WEIGHTS = { k1: 1.2, b: 0.75, contextWeight: 0.3, averageLength: 0 };

/** BM25 summed here from every posting: the oracle the database's sums must equal. */
function summedHere(rows: ReturnType<typeof postingRows>, idf: Map<string, number>, averageLength: number) {
  const scores = new Map<number, [number, number]>();
  for (const [unit, stem, tf, tfContext, length] of rows) {
    const freq = tf + WEIGHTS.contextWeight * tfContext;
    const norm = WEIGHTS.k1 * (1 - WEIGHTS.b + (WEIGHTS.b * length) / averageLength);
    const part = freq > 0 ? (idf.get(stem)! * freq * (WEIGHTS.k1 + 1)) / (freq + norm) : 0;
    const s = scores.get(unit) ?? [0, length];
    s[0] += part;
    scores.set(unit, s);
  }
  return [...scores].map(([unit, [bm25, length]]) => [unit, bm25, length] as ScoredUnit);
}

const ranked = (units: ScoredUnit[]) => [...units].sort((a, b) => b[1] - a[1] || a[0] - b[0]);

describe("topUnits: BM25 summed by the database", () => {
  it("ranks as summing every posting does, with shared contexts, parts added by the caller, and windows", async () => {
    dir = tempDir();
    engine = await openEngine({
      dataDir: dir.path,
      apiKey: TEST_KEY,
      embedder: null,
      log: () => {},
      workers: 1,
    });
    const ns = new MemoryClient({ apiKey: TEST_KEY, fetch: engine.fetch, maxRetries: 0 }).ns("top");
    const docs = [
      "Alice adopted a rescue dog named Biscuit. The dog loves the beach.",
      "Bob prefers cats; his cat sleeps all day in the sun.",
      "The beach trip was cancelled because of rain, so the dog stayed home.",
      "Alice: I took Biscuit to the vet today.\nBob: Is the dog alright?\nAlice: Yes, just a checkup for the dog.",
      "Carol runs a bakery. Her sourdough bread sells out by noon.",
      "Dog, dog, dog: the word appears three times here, and beach once.",
    ];
    for (const content of docs) await ns.documents.add({ content, dreaming: "instant" });
    for (const d of (await ns.documents.list({ limit: 50 })).documents)
      await ns.documents.waitFor(d.id, { timeoutMs: 20_000, pollIntervalMs: 20 });
    const db = engine.context.db;
    const nsId = (db.prepare("SELECT id FROM namespaces WHERE name = 'top'").get() as { id: string }).id;
    for (const corpus of ["chunks", "memories"] as const) {
      const space = searchSpace(db, nsId, corpus)!;
      expect(space.units).toBeGreaterThan(0);
      const weights = { ...WEIGHTS, averageLength: space.length / space.units };
      for (const query of [
        [
          ["dog", 1.7],
          ["beach", 2.4],
        ],
        [
          ["alic", 2.0],
          ["dog", 0.4],
          ["vet", 3.1],
        ],
        [["cat", 1.1]],
        [["nowher", 5.0]],
      ] as [string, number][][]) {
        const idf = new Map(query);
        const oracle = ranked(
          summedHere(postingRows(db, space.id, [...idf.keys()]), idf, weights.averageLength),
        );
        const terms = query.map(([stem, i]) => ({ stem, idf: i }));
        const got = topUnits(db, space.id, terms, [], weights, 100);
        expect(got.map((r) => r[0])).toEqual(oracle.map((r) => r[0]));
        got.forEach((r, i) => {
          expect(r[1]).toBeCloseTo(oracle[i]![1], 9);
          expect(r[2]).toBe(oracle[i]![2]);
        });
        // A window further down the same ranking.
        expect(topUnits(db, space.id, terms, [], weights, 2, 1).map((r) => r[0])).toEqual(
          oracle.slice(1, 3).map((r) => r[0]),
        );
        // A part added by the caller (a phrase's) is summed with the unit's others.
        const last = oracle.at(-1);
        if (last) {
          const lifted = topUnits(db, space.id, terms, [[last[0], 100, last[2]]], weights, 1);
          expect(lifted[0]![0]).toBe(last[0]);
          expect(lifted[0]![1]).toBeCloseTo(last[1] + 100, 9);
        }
      }
    }
  });
});
