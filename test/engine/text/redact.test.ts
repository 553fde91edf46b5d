import { describe, expect, it } from "vitest";
import { chunkText } from "../../../src/engine/ingest/chunk.js";
import {
  redactPassage,
  redactTitle,
  saysNothing,
  sentenceSaying,
  sentenceSpans,
  withoutSentences,
} from "../../../src/engine/text/redact.js";

describe("taking forgotten sentences out of passages", () => {
  it("finds every place the text says a sentence, merging overlaps", () => {
    const text = "A b. Secret one. C d. Secret one. Secret one two.";
    expect(sentenceSpans(text, ["Secret one.", "Secret one two."])).toEqual([
      { start: 5, end: 16 },
      { start: 22, end: 33 },
      { start: 34, end: 49 },
    ]);
    expect(sentenceSpans(text, [""])).toEqual([]);
  });

  it("cuts the sentence out of each chunk that holds it, also across a chunk boundary", () => {
    const forgotten = "My bank PIN is 4821 and nobody else knows it.";
    const text = `${"The garden needs work this spring. ".repeat(3)}${forgotten} ${"We plant beans in May. ".repeat(3)}`;
    // Small chunks: the sentence is split between two of them.
    const chunks = chunkText(text, { format: "plain", maxChars: 60 });
    const spans = sentenceSpans(text, [forgotten]);
    const redacted = chunks.map((c) => redactPassage(text, c, spans, [forgotten]));
    const all = redacted.join(" ");
    for (const word of ["PIN", "4821", "nobody"]) expect(all).not.toContain(word);
    expect(all).toContain("garden needs work");
    expect(all).toContain("plant beans in May");
    // Chunks without the sentence are left exactly as they were.
    const untouched = chunks.filter((c) => c.end <= spans[0]!.start || c.start >= spans[0]!.end);
    expect(untouched.length).toBeGreaterThan(0);
    for (const c of untouched) expect(redactPassage(text, c, spans, [forgotten])).toBe(c.content);
  });

  it("falls back to the passage's own words when its content is not the text's span", () => {
    const p = { start: 0, end: 5, content: "Keep this. Drop that now. Keep too." };
    expect(redactPassage("other", p, [], ["Drop that now."])).toBe("Keep this. Keep too.");
    expect(withoutSentences("one\nDrop that now.\ntwo", ["Drop that now."])).toBe("one\ntwo");
  });

  it("says a turn left with only its speaker says nothing", () => {
    expect(saysNothing("Priya: ", "priya")).toBe(true);
    expect(saysNothing("  . ", null)).toBe(true);
    expect(saysNothing("Priya: fine", "priya")).toBe(false);
    expect(saysNothing("Owner: Anna", null)).toBe(false);
  });

  it("takes a forgotten sentence out of a title made from the first line, whole or cut", () => {
    expect(redactTitle("Owner: Tomasz.", ["Owner: Tomasz."])).toBeNull();
    expect(redactTitle("Owner: Tomasz. Due Friday.", ["Owner: Tomasz."])).toBe("Due Friday.");
    // A title cut at a word inside the sentence (textTitle's "…").
    expect(
      redactTitle("Weekly sync. I prefer dark roast coffee and my sister…", [
        "I prefer dark roast coffee and my sister Maya lives in Lisbon.",
      ]),
    ).toBe("Weekly sync.");
    expect(redactTitle("Project notes", ["Owner: Tomasz."])).toBe("Project notes");
  });

  it("finds the sentence a model's memory came from: verbatim, or clearly holding its words, else none", () => {
    const text =
      "Weekly sync notes.\nI prefer dark roast coffee and my sister Maya lives in Lisbon. The build server runs on Fridays.";
    expect(sentenceSaying(text, "The build server runs on Fridays.")).toBe(
      "The build server runs on Fridays.",
    );
    expect(sentenceSaying(text, "The user prefers dark roast coffee.")).toBe(
      "I prefer dark roast coffee and my sister Maya lives in Lisbon.",
    );
    // Words spread over the text, or too few, point at no sentence: nothing is taken on a guess.
    expect(sentenceSaying(text, "The user's sister works at the build server company in Porto.")).toBeNull();
    expect(sentenceSaying(text, "Coffee.")).toBeNull();
  });
});
