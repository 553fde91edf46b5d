import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { STEM_RANKS, stemRanksOf, tableWords } from "../../../src/engine/text/background.js";

describe("the stems' background ranks", () => {
  it("assets/stem-ranks.tsv is what the index's tokenizer makes of the word table (else: npx tsx scripts/build-stem-ranks.ts)", () => {
    const built = readFileSync(STEM_RANKS, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => line.split("\t"));
    const made = [...stemRanksOf(tableWords())]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([stem, rank]) => [stem, String(rank)]);
    expect(made.length).toBeGreaterThan(30_000);
    expect(built).toEqual(made);
  });
});
