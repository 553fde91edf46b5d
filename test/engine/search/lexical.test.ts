import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fuseSignals, lexicalSimilarities, vectorSimilarity } from "../../../src/engine/search/fusion.js";
import {
  BACKGROUND_UNITS,
  bm25Idf,
  lexicalSearch,
  UBIQUITOUS_WEIGHT,
} from "../../../src/engine/search/lexical.js";
import { backgroundUnitShare } from "../../../src/engine/text/background.js";
import { matchExpression, queryTerms, stemWords, termFrequency } from "../../../src/engine/text/terms.js";
import { TestStore } from "./store.js";

describe("query terms", () => {
  it("keeps the informative words, stemmed as the index stems them, once each", () => {
    const terms = queryTerms("When did Caroline go running? She RUNS and runs!");
    expect(terms.map((t) => t.text)).toEqual(["caroline", "go", "running"]);
    expect(terms.map((t) => t.stems)).toEqual([["carolin"], ["go"], ["run"]]);
  });

  it("keeps stop words when the query has nothing else", () => {
    expect(queryTerms("who is she").map((t) => t.text)).toEqual(["who", "is", "she"]);
    expect(queryTerms("?!* -- \"'")).toEqual([]);
  });

  it("quotes every term and ORs them, so FTS5 syntax in a query is just words", () => {
    expect(matchExpression(queryTerms('NEAR(x "AND" y*) -z'))).toBe('"near" OR "x" OR "y" OR "z"');
    expect(matchExpression([])).toBeNull();
  });

  it("counts a term's occurrences in a text the way the index tokenizes it", () => {
    const terms = queryTerms("running naïve go");
    const [stems] = stemWords(["He runs, ran and keeps running; a NAIVE go-getter goes."], terms);
    // Porter makes "goes" "goe", not "go": the index does the same.
    expect(terms.map((t) => termFrequency(stems!, t))).toEqual([2, 1, 1]);
  });
});

describe("lexical similarity", () => {
  it("is the geometric mean of the best row's coverage and the row's share of the best score", () => {
    const sims = lexicalSimilarities({
      candidates: [
        { rowid: 1, bm25: 5 },
        { rowid: 2, bm25: 1.25 },
      ],
      idfSum: 5,
      termIdf: [5],
    });
    expect(sims.get(1)).toBeCloseTo(Math.sqrt(Math.tanh(1)), 12);
    expect(sims.get(2)).toBeCloseTo(Math.sqrt(Math.tanh(1) * 0.25), 12);
    // A best row holding 5% of the query's idf mass: nothing reaches 0.3.
    const weak = lexicalSimilarities({ candidates: [{ rowid: 1, bm25: 0.25 }], idfSum: 5, termIdf: [5] });
    expect(weak.get(1)).toBeLessThan(0.3);
    const weighted = lexicalSimilarities(
      { candidates: [{ rowid: 1, bm25: 5 }], idfSum: 5, termIdf: [5] },
      0.35,
    );
    expect(weighted.get(1)).toBeCloseTo(Math.sqrt(Math.tanh(1) * 0.35), 12);
  });

  it("fuses two signals into [0, 1], lifting agreement and keeping one signal as is", () => {
    expect(fuseSignals(0.6, 0)).toBe(0.6);
    expect(fuseSignals(0, 0.6)).toBe(0.6);
    expect(fuseSignals(0.5, 0.5)).toBeCloseTo(0.625, 12);
    expect(fuseSignals(0.2, 0.2)).toBeLessThan(0.3);
    expect(fuseSignals(1, 1)).toBe(1);
    expect(vectorSimilarity(-0.4)).toBe(0);
  });
});

describe("lexicalSearch", () => {
  let store: TestStore;
  let ns: string;
  beforeAll(async () => {
    store = await TestStore.open();
    ns = await store.namespace("lex");
    // "weather" is in 16 of 40 rows (idf 0.39), "harbour" and "tar" in 4 of them (idf 2.09): the
    // default threshold leaves "weather" out of MATCH, and its part must be added back;
    // "market" is in every row (idf floored at 1e-6).
    for (let i = 0; i < 40; i++) {
      const extra = i % 10 === 1 ? " The harbour smelled of tar." : "";
      const weather =
        i % 5 === 1 || i % 5 === 2 ? ` The weather was ${i % 2 ? "grey" : "weather, weather"}.` : "";
      await store.document(ns, [`Entry ${i}: we walked to the market.${weather}${extra}`]);
    }
  });
  afterAll(async () => await store.close());

  it("gives the same scores over the whole query when it reads only the rarest terms", async () => {
    const terms = queryTerms("weather harbour tar market");
    const full = new Map(
      (
        await lexicalSearch(store.db, "chunks", terms, { namespaceId: ns }, 40, { budget: 1e9 })
      ).candidates.map((c) => [c.rowid, c.bm25]),
    );
    // A budget of 10 rows reads "harbour" and "tar" only: "weather" and "market" are added back.
    const pruned = await lexicalSearch(store.db, "chunks", terms, { namespaceId: ns }, 3, { budget: 10 });
    expect(pruned.candidates).toHaveLength(3);
    for (const c of pruned.candidates) expect(c.bm25).toBeCloseTo(full.get(c.rowid)!, 9);
    // Every candidate also holds "weather": without its part the scores would be lower.
    const harbourOnly = await lexicalSearch(
      store.db,
      "chunks",
      queryTerms("harbour tar market"),
      { namespaceId: ns },
      3,
      {
        budget: 1e9,
      },
    );
    expect(pruned.candidates[0]!.bm25).toBeGreaterThan(harbourOnly.candidates[0]!.bm25);
    const scores = pruned.candidates.map((c) => c.bm25);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("reports each term's idf from the namespace's counts and the background, and their sum", async () => {
    const terms = queryTerms("harbour market");
    const r = await lexicalSearch(store.db, "chunks", terms, { namespaceId: ns }, 5);
    const idf = (hits: number, stem: string) =>
      bm25Idf(40 + BACKGROUND_UNITS, hits + BACKGROUND_UNITS * backgroundUnitShare(stem));
    expect(r.termIdf[0]).toBeCloseTo(idf(4, "harbour"), 12);
    // "market" is in every row: beside "harbour", in four, it counts at most half of it.
    expect(r.termIdf[1]).toBeCloseTo(Math.min(idf(40, "market"), UBIQUITOUS_WEIGHT * idf(4, "harbour")), 12);
    expect(r.termIdf[1]).toBeLessThan(r.termIdf[0]!);
    expect(r.idfSum).toBeCloseTo(r.termIdf[0]! + r.termIdf[1]!, 12);
  });

  it("counts a term nearly every row holds below the query's telling words, and in full when it is all the query asks", async () => {
    const idf = (hits: number, stem: string) =>
      bm25Idf(40 + BACKGROUND_UNITS, hits + BACKGROUND_UNITS * backgroundUnitShare(stem));
    // "market" is in all 40 rows, "harbour" in four.
    const both = await lexicalSearch(
      store.db,
      "chunks",
      queryTerms("harbour market"),
      { namespaceId: ns },
      5,
    );
    expect(both.termIdf[1]!).toBeLessThanOrEqual(UBIQUITOUS_WEIGHT * both.termIdf[0]! + 1e-12);
    const alone = await lexicalSearch(store.db, "chunks", queryTerms("market"), { namespaceId: ns }, 5);
    expect(alone.termIdf[0]).toBeCloseTo(idf(40, "market"), 12);
    expect(alone.candidates.length).toBeGreaterThan(0);
  });

  it("depends on the namespace's own rows only", async () => {
    const terms = queryTerms("harbour tar");
    const before = await lexicalSearch(store.db, "chunks", terms, { namespaceId: ns }, 5);
    const other = await store.namespace("lex-neighbour");
    for (let i = 0; i < 30; i++) await store.document(other, [`The harbour ${i} smelled of tar and fish.`]);
    const after = await lexicalSearch(store.db, "chunks", terms, { namespaceId: ns }, 5);
    expect(after).toEqual(before);
  });
});
