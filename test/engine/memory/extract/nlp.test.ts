import { describe, expect, it } from "vitest";
import { analyse, MAX_WORD_CHARS } from "../../../../src/engine/memory/extract/nlp.js";

describe("analyse", () => {
  it("reads a run without spaces longer than a word can be as spaces, keeping every offset right", () => {
    const junk = "a".repeat(MAX_WORD_CHARS + 1);
    const text = `Alice moved to Berlin. ${junk} Bob adopted a cat.`;
    const sentences = analyse(text);
    const tokens = sentences.flatMap((s) => s.tokens);
    expect(tokens.every((t) => t.value.length <= MAX_WORD_CHARS)).toBe(true);
    for (const t of tokens) expect(text.slice(t.start, t.end)).toBe(t.value);
    expect(tokens.map((t) => t.value)).toContain("Bob");
    expect(tokens.find((t) => t.value === "Bob")!.start).toBe(text.indexOf("Bob"));
    // A long word that is still a word is read.
    const word = "b".repeat(MAX_WORD_CHARS);
    expect(analyse(`Say ${word} twice.`).flatMap((s) => s.tokens.map((t) => t.value))).toContain(word);
  });
});
