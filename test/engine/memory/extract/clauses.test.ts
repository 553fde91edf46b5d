/** A sentence's clauses (extract/clauses.ts): one fact each, what belongs together kept together. */
import { describe, expect, it } from "vitest";
import { splitClauses } from "../../../../src/engine/memory/extract/clauses.js";
import { analyse } from "../../../../src/engine/memory/extract/nlp.js";

/** Each clause's words, an unsaid subject taken from the clause before in brackets. */
const clauses = (text: string, apart = () => true) =>
  splitClauses(analyse(text)[0]!, apart).map((c) =>
    c.tokens.map((t) => (t.implied ? `[${t.value}]` : t.value)).join(" "),
  );

describe("a sentence's clauses", () => {
  it("splits a second fact with its subject unsaid, giving it the first one's", () => {
    expect(clauses("I sold the Clio last week and bought an electric bike.")).toEqual([
      "I sold the Clio last week",
      "[I] bought an electric bike .",
    ]);
    expect(clauses("My sister Inês lives in Berlin and works as an architect.")).toEqual([
      "My sister Inês lives in Berlin",
      "[My] [sister] [Inês] works as an architect .",
    ]);
  });

  it("splits at a semicolon, and where someone else's clause starts", () => {
    expect(
      clauses("My colleague Rui Matos leads the mobile team; he prefers pair programming."),
    ).toHaveLength(2);
    expect(clauses("Sofia loves surfing, but I prefer running along the river.")).toEqual([
      "Sofia loves surfing",
      "I prefer running along the river .",
    ]);
  });

  it("keeps one scene one fact unless the caller says the two are separate facts", () => {
    const scene = "We went camping and saw a bear.";
    expect(clauses(scene, () => false)).toHaveLength(1);
    expect(clauses("My favourite language is Python, and I'm learning Rust.", () => false)).toHaveLength(1);
    expect(clauses("My favourite language is Python, and I'm learning Rust.")).toHaveLength(2);
  });

  it("never splits a noun group, a list or a clause that points back", () => {
    expect(clauses("A failed Dagster run between 22:00 and 23:00 UTC does not page anyone.")).toHaveLength(1);
    expect(clauses("I have two kids and a dog named Max.")).toHaveLength(1);
    expect(clauses("We went to the lake and it was great.")).toHaveLength(1);
    // A helper verb shared by both ("should come down and join") is one fact.
    expect(clauses("You should come down and join us on the trails.")).toHaveLength(1);
  });
});
