import { describe, expect, it } from "vitest";
import { CHUNK_MAX_CHARS_DEFAULT, chunkText, type TextChunk } from "../../../src/engine/ingest/chunk.js";
import { conversationTurns } from "../../../src/engine/text/conversation.js";

/** The invariants every chunking must keep: exact offsets, order, positions, bounded size, no empty chunk. */
function expectWellFormed(text: string, chunks: TextChunk[], maxChars: number) {
  let previousEnd = 0;
  chunks.forEach((chunk, i) => {
    expect(chunk.position).toBe(i);
    expect(chunk.content).toBe(text.slice(chunk.start, chunk.end));
    expect(chunk.content.length).toBeGreaterThan(0);
    expect(chunk.content.length).toBeLessThanOrEqual(maxChars);
    expect(chunk.content).toBe(chunk.content.trim());
    expect(chunk.start).toBeGreaterThanOrEqual(previousEnd);
    // Only whitespace is left out between chunks.
    expect(text.slice(previousEnd, chunk.start).trim()).toBe("");
    previousEnd = chunk.end;
  });
  expect(text.slice(previousEnd).trim()).toBe("");
}

const SENTENCES = [
  "Caroline moved to Berlin in May 2023.",
  "Dr. Smith, her counselor, recommended a support group.",
  "She has been going every Tuesday since then!",
  "Is it helping?",
  "Melanie thinks so, e.g. she sleeps better.",
  "They plan a trip to the Alps with J. R. Tolkien's books in their bags.",
];

function prose(paragraphs: number): string {
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const count = 2 + (p % 4);
    const sentences: string[] = [];
    for (let s = 0; s < count; s++) sentences.push(SENTENCES[(p * 3 + s) % SENTENCES.length]!);
    out.push(sentences.join(" "));
  }
  return out.join("\n\n");
}

describe("chunkText", () => {
  it("keeps a short document as exactly one chunk", () => {
    const text = "  I like green tea.\n\nAnd black coffee.\n";
    const chunks = chunkText(text, { format: "plain" });
    expect(chunks).toEqual([
      { content: "I like green tea.\n\nAnd black coffee.", position: 0, start: 2, end: 38 },
    ]);
  });

  it("gives no chunk for empty or whitespace-only text", () => {
    expect(chunkText("", { format: "plain" })).toEqual([]);
    expect(chunkText(" \n\n\t ", { format: "conversation" })).toEqual([]);
  });

  it("uses about 800 characters by default", () => {
    expect(CHUNK_MAX_CHARS_DEFAULT).toBe(800);
    const text = prose(60);
    const chunks = chunkText(text, { format: "plain" });
    expectWellFormed(text, chunks, 800);
    expect(chunks.length).toBeGreaterThan(text.length / 800);
  });

  it("keeps offsets exact, sizes bounded and sentences whole", () => {
    const text = prose(40);
    for (const maxChars of [120, 200, 333, 800]) {
      const chunks = chunkText(text, { format: "plain", maxChars });
      expectWellFormed(text, chunks, maxChars);
      for (const chunk of chunks) {
        // Every chunk is made of whole sentences: it starts at a sentence start and ends at a sentence end.
        expect(SENTENCES.some((s) => chunk.content.startsWith(s))).toBe(true);
        expect(SENTENCES.some((s) => chunk.content.endsWith(s))).toBe(true);
      }
    }
  });

  it("does not break a sentence after a title or an initial", () => {
    const text = "Dr. Smith met J. Doe at noon. Mrs. Jones was there too.";
    const chunks = chunkText(text, { format: "plain", maxChars: 35 });
    expect(chunks.map((c) => c.content)).toEqual([
      "Dr. Smith met J. Doe at noon.",
      "Mrs. Jones was there too.",
    ]);
  });

  it("prefers a paragraph boundary over a sentence boundary", () => {
    const first = "One short sentence. Another short sentence here.";
    const second = "A second paragraph begins. It goes on for a while, and then a little longer.";
    const text = `${first}\n\n${second}`;
    const chunks = chunkText(text, { format: "plain", maxChars: 90 });
    expect(chunks.map((c) => c.content)).toEqual([first, second]);
  });

  it("packs several small paragraphs into one chunk", () => {
    const fourth = "The fourth paragraph is longer. It has two parts.";
    const text = `First.\n\nSecond.\n\nThird.\n\n${fourth}`;
    const chunks = chunkText(text, { format: "plain", maxChars: 60 });
    expect(chunks.map((c) => c.content)).toEqual(["First.\n\nSecond.\n\nThird.", fourth]);
    expectWellFormed(text, chunks, 60);
  });

  it("splits a sentence longer than maxChars on words, and a word longer than that by characters", () => {
    const long = `${"word ".repeat(40).trim()}.`;
    const blob = "x".repeat(250);
    const text = `${long}\n\n${blob}`;
    const chunks = chunkText(text, { format: "plain", maxChars: 100 });
    expectWellFormed(text, chunks, 100);
    for (const chunk of chunks.filter((c) => c.content.startsWith("word"))) {
      expect(chunk.content).toMatch(/^(word )*word\.?$/);
    }
    expect(chunks.filter((c) => c.content.startsWith("x")).map((c) => c.content.length)).toEqual([
      100, 100, 50,
    ]);
  });

  it("never splits a surrogate pair", () => {
    const text = "😀".repeat(120);
    const chunks = chunkText(text, { format: "plain", maxChars: 51 });
    expectWellFormed(text, chunks, 51);
    for (const chunk of chunks) expect(chunk.content).toMatch(/^(😀)+$/u);
  });

  it("is deterministic", () => {
    const text = prose(30);
    expect(chunkText(text, { format: "plain", maxChars: 250 })).toEqual(
      chunkText(text, { format: "plain", maxChars: 250 }),
    );
  });

  it("makes each conversation turn one chunk, with exact offsets, its speaker and the turns around it", () => {
    const text = [
      "Caroline: I went to a support group yesterday.",
      "Melanie: How was it?",
      "  Caroline: Powerful. The stories were inspiring.",
      "It made me want to study counseling.",
      "",
      "Melanie: That's great!",
    ].join("\n");
    const chunks = chunkText(text, { format: "conversation" });
    expectWellFormed(text, chunks, CHUNK_MAX_CHARS_DEFAULT);
    const turns = conversationTurns(text);
    expect(chunks.map((c) => [c.start, c.end])).toEqual(turns.map((t) => [t.start, t.end]));
    expect(chunks.map((c) => c.content)).toEqual([
      "Caroline: I went to a support group yesterday.",
      "Melanie: How was it?",
      "Caroline: Powerful. The stories were inspiring.\nIt made me want to study counseling.",
      "Melanie: That's great!",
    ]);
    expect(chunks.map((c) => c.speaker)).toEqual(["Caroline", "Melanie", "Caroline", "Melanie"]);
    // Three turns each side, the chunk's own turn left out.
    expect(chunks[1]!.context).toBe([chunks[0]!.content, chunks[2]!.content, chunks[3]!.content].join("\n"));
    expect(chunks[3]!.context).toBe([0, 1, 2].map((i) => chunks[i]!.content).join("\n"));
  });

  it("takes at most three turns each side as a chunk's context", () => {
    const lines = Array.from({ length: 9 }, (_, i) => `${i % 2 ? "Melanie" : "Caroline"}: turn ${i}.`);
    const chunks = chunkText(lines.join("\n"), { format: "conversation" });
    expect(chunks).toHaveLength(9);
    expect(chunks[4]!.context).toBe([...lines.slice(1, 4), ...lines.slice(5, 8)].join("\n"));
  });

  it("keeps every conversation turn whole and never joins two turns", () => {
    const lines: string[] = [];
    for (let i = 0; i < 40; i++) {
      lines.push(
        `${i % 2 ? "Melanie" : "Caroline"}: ${SENTENCES[i % SENTENCES.length]} ${SENTENCES[(i + 1) % SENTENCES.length]}`,
      );
    }
    const text = lines.join("\n");
    const chunks = chunkText(text, { format: "conversation", maxChars: 300 });
    expectWellFormed(text, chunks, 300);
    expect(chunks).toHaveLength(40);
    for (const chunk of chunks) expect(chunk.content).toMatch(/^(Caroline|Melanie): [^\n]*$/);
  });

  it("splits a turn longer than maxChars on its sentences, and only that turn", () => {
    const long = `Caroline: ${SENTENCES.join(" ")} ${SENTENCES.join(" ")}`;
    const text = `Melanie: How was the group?\n${long}\nMelanie: Glad to hear it.`;
    const chunks = chunkText(text, { format: "conversation", maxChars: 120 });
    expectWellFormed(text, chunks, 120);
    expect(chunks[0]!.content).toBe("Melanie: How was the group?");
    expect(chunks.at(-1)!.content).toBe("Melanie: Glad to hear it.");
    const pieces = chunks.slice(1, -1);
    expect(pieces.length).toBeGreaterThan(1);
    // The long turn is cut only between sentences; every piece keeps the turn's speaker and context.
    expect(pieces[0]!.content.startsWith("Caroline: ")).toBe(true);
    for (const piece of pieces) {
      expect(
        piece.content.startsWith("Caroline: ") || SENTENCES.some((s) => piece.content.startsWith(s)),
      ).toBe(true);
      expect(SENTENCES.some((s) => piece.content.endsWith(s))).toBe(true);
      expect(piece.speaker).toBe("Caroline");
      expect(piece.context).toBe("Melanie: How was the group?\nMelanie: Glad to hear it.");
    }
  });
});
