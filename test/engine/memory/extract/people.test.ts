/** The people a text introduces (extract/people.ts People), and who "we" and "she" are. */
import { describe, expect, it } from "vitest";
import { analyse } from "../../../../src/engine/memory/extract/nlp.js";
import { People } from "../../../../src/engine/memory/extract/people.js";

const reading = (...sentences: string[]) => {
  const people = new People();
  for (const s of sentences) for (const sentence of analyse(s)) people.read(sentence.tokens, "the user");
  return people;
};

describe("the people a text introduces", () => {
  it("knows a relation said either way round, or in apposition", () => {
    const p = reading(
      "My wife is Sofia.",
      "My colleague Rui Matos leads the mobile team.",
      "We have a son, Tomás, who is six.",
      "Priya Raman, my manager, runs the design team.",
    );
    expect(p.get("sofia")).toEqual({ name: "Sofia", relation: "wife", of: "the user" });
    expect(p.get("rui matos")?.relation).toBe("colleague");
    expect(p.get("tomás")?.relation).toBe("son");
    expect(p.get("priya raman")?.relation).toBe("manager");
    // Adjectives between the owner and the relation: "my best friend Marta".
    expect(reading("My best friend Marta lives in Porto.").get("marta")?.relation).toBe("friend");
    // The one named last is who a later "she" or "he" is.
    expect(p.last).toBe("priya raman");
  });

  it("gives 'we' the speaker's partner, and no one without one", () => {
    expect(reading("My husband is Daniel.").partnerOf("the user")?.name).toBe("Daniel");
    expect(reading("My colleague Lena joined.").partnerOf("the user")).toBeUndefined();
  });

  it("knows a thing said again as the one of someone's named before", () => {
    const p = new People();
    expect(p.thing("the user's standup")).toBe("the user's standup");
    expect(p.thing("standup")).toBe("the user's standup");
    expect(p.thing("demo")).toBe("demo");
  });
});
