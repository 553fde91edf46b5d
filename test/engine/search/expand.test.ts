import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ATTRIBUTE_WEIGHT, expandTerms, expansionTerms } from "../../../src/engine/search/expand.js";
import { queryTerms } from "../../../src/engine/text/terms.js";

describe("expandTerms (WordNet synonyms and kinds, from the shipped table)", () => {
  it("reaches the kinds of a phrase the question uses", () => {
    const martial = expandTerms(["martial", "arts"]).map((t) => t.term);
    expect(martial).toEqual(expect.arrayContaining(["taekwondo", "karate", "judo"]));
    const countries = expandTerms(["european", "countries"]);
    expect(countries.map((t) => t.term)).toEqual(expect.arrayContaining(["spain", "france"]));
    expect(countries.find((t) => t.term === "spain")).toMatchObject({
      weight: 0.5,
      from: "european country",
    });
  });

  it("weighs synonyms and kinds below the question's own words, and never returns those", () => {
    const out = expandTerms(["sport"]);
    expect(out.length).toBeGreaterThan(5);
    for (const t of out) {
      expect(t.weight).toBeGreaterThan(0);
      expect(t.weight).toBeLessThanOrEqual(0.6);
      expect(t.term).not.toBe("sport");
    }
    expect(out.map((t) => t.term)).toContain("skiing");
    // Sorted best first.
    expect([...out].sort((a, b) => b.weight - a.weight)).toEqual(out);
  });

  it("does not expand a word a phrase already covers, and knows nothing of unknown words", () => {
    const phrase = expandTerms(["martial", "arts"]).map((t) => t.term);
    expect(phrase).not.toContain("mosaic"); // a kind of "art" alone
    expect(expandTerms(["zzqx", "blorf"])).toEqual([]);
    expect(expandTerms([])).toEqual([]);
  });

  it("caps the number of expansions", () => {
    expect(expandTerms(["european", "countries"], { max: 3 })).toHaveLength(3);
  });
});

describe("expandTerms over a table of its own", () => {
  const dir = mkdtempSync(join(tmpdir(), "memctx-expand-"));
  const path = join(dir, "table.tsv");
  writeFileSync(path, "pet\tdog:0.5,cat:0.5\nhot dog\tfrankfurter:0.6\n");
  afterAll(() => {
    // Back to the shipped table for any later test in this worker.
    expandTerms([], { path: new URL("../../../assets/wordnet-expansions.tsv", import.meta.url) });
  });

  it("reads the plural's head and the phrase before the words", () => {
    expect(expandTerms(["pets"], { path }).map((t) => t.term)).toEqual(["cat", "dog"]);
    expect(expandTerms(["hot", "dogs"], { path })).toEqual([
      { term: "frankfurter", weight: 0.6, from: "hot dog" },
    ]);
  });
});

describe("expansionTerms: what a question means without saying it", () => {
  const expanded = (q: string) => expansionTerms(queryTerms(q)).map((e) => e.term.text);

  it("reads a word of a person's attribute as the attribute's other words", () => {
    expect(expanded("where does she live")).toEqual(expect.arrayContaining(["move", "relocate", "reside"]));
    expect(expanded("who hired him")).toEqual(expect.arrayContaining(["job", "work", "employer"]));
    expect(expanded("is Sam married")).toEqual(expect.arrayContaining(["husband", "wife", "engaged"]));
    const move = expansionTerms(queryTerms("lives")).find((e) => e.term.text === "move");
    expect(move?.weight).toBe(ATTRIBUTE_WEIGHT);
  });

  it("does not expand the word memctx writes for the person remembered", () => {
    // WordNet's kinds of a user (eater, drinker, vegetarian) would answer "where does the user live?".
    expect(expanded("the user")).toEqual([]);
    expect(expanded("where does the user live")).not.toContain("vegetarian");
  });
});
