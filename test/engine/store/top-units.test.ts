import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient } from "../../../src/client/index.js";
import { type Engine, openEngine } from "../../../src/engine/index.js";
import type { Db } from "../../../src/engine/store/connection.js";
import {
  postingRows,
  type ScoredUnit,
  searchSpace,
  type WeightedTerm,
} from "../../../src/engine/store/search-index.js";
import { topUnits } from "../../../src/engine/store/search-scope.js";
import { TEST_KEY, tempDir } from "../../support/harness.js";

let dir: ReturnType<typeof tempDir>;
let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
  dir?.remove();
});

const WEIGHTS = { k1: 1.2, b: 0.75, contextWeight: 0.3, averageLength: 0 };

/**
 * BM25 summed here from every posting: the oracle the database's sums must equal. A phrase counts
 * in a unit holding all its stems, as often as the least frequent of them.
 */
async function summedHere(db: Db, space: number, terms: readonly WeightedTerm[], averageLength: number) {
  const scores = new Map<number, [number, number]>();
  for (const { stems, idf } of terms) {
    const byUnit = new Map<number, { tf: number; tfContext: number; length: number; n: number }>();
    for (const stem of stems) {
      for (const [unit, , tf, tfContext, length] of await postingRows(db, space, [stem])) {
        const h = byUnit.get(unit);
        if (h) {
          h.tf = Math.min(h.tf, tf);
          h.tfContext = Math.min(h.tfContext, tfContext);
          h.n++;
        } else byUnit.set(unit, { tf, tfContext, length, n: 1 });
      }
    }
    for (const [unit, h] of byUnit) {
      if (h.n < stems.length) continue;
      const freq = h.tf + WEIGHTS.contextWeight * h.tfContext;
      const norm = WEIGHTS.k1 * (1 - WEIGHTS.b + (WEIGHTS.b * h.length) / averageLength);
      const part = freq > 0 ? (idf * freq * (WEIGHTS.k1 + 1)) / (freq + norm) : 0;
      const s = scores.get(unit) ?? [0, h.length];
      s[0] += part;
      scores.set(unit, s);
    }
  }
  return [...scores].map(([unit, [bm25, length]]) => [unit, bm25, length] as ScoredUnit);
}

const ranked = (units: ScoredUnit[]) => [...units].sort((a, b) => b[1] - a[1] || a[0] - b[0]);

describe("topUnits: BM25 summed by the database", () => {
  it("ranks as summing every posting does, with shared contexts, phrases and windows", async () => {
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
      await ns.documents.waitFor(d.id, { pollIntervalMs: 20 });
    const db = engine.context.db;
    const nsId = ((await db.prepare("SELECT id FROM namespaces WHERE name = 'top'").get()) as { id: string })
      .id;
    for (const corpus of ["chunks", "memories"] as const) {
      const space = (await searchSpace(db, nsId, corpus))!;
      expect(space.units).toBeGreaterThan(0);
      const weights = { ...WEIGHTS, averageLength: space.length / space.units };
      for (const terms of [
        [
          { stems: ["dog"], idf: 1.7 },
          { stems: ["beach"], idf: 2.4 },
        ],
        [
          { stems: ["alic"], idf: 2.0 },
          { stems: ["dog"], idf: 0.4 },
          { stems: ["vet"], idf: 3.1 },
        ],
        [{ stems: ["cat"], idf: 1.1 }],
        [{ stems: ["nowher"], idf: 5.0 }],
        // Phrases: both stems in one unit; one whose second stem no unit holds counts nowhere.
        [
          { stems: ["dog", "beach"], idf: 1.3 },
          { stems: ["cat"], idf: 0.9 },
        ],
        [
          { stems: ["alic", "vet"], idf: 2.2 },
          { stems: ["dog", "nowher"], idf: 4.0 },
        ],
      ] as WeightedTerm[][]) {
        const oracle = ranked(await summedHere(db, space.id, terms, weights.averageLength));
        const got = await topUnits(db, corpus, { namespaceId: nsId }, space.id, terms, weights, 100);
        expect(got.map((r) => r[0])).toEqual(oracle.map((r) => r[0]));
        got.forEach((r, i) => {
          expect(r[1]).toBeCloseTo(oracle[i]![1], 9);
          expect(r[2]).toBe(oracle[i]![2]);
        });
        // Each unit with its visibility in the search's scope: all of them here, none in another namespace's.
        expect(got.every((r) => r[3] === 1)).toBe(true);
        const elsewhere = await topUnits(
          db,
          corpus,
          { namespaceId: "elsewhere" },
          space.id,
          terms,
          weights,
          100,
        );
        expect(elsewhere.map((r) => [r[0], r[3]])).toEqual(got.map((r) => [r[0], null]));
        // A window further down the same ranking.
        expect(
          (await topUnits(db, corpus, { namespaceId: nsId }, space.id, terms, weights, 2, 1)).map(
            (r) => r[0],
          ),
        ).toEqual(oracle.slice(1, 3).map((r) => r[0]));
      }
    }
  });
});
