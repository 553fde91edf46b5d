import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WORD_VECTORS_MODEL, WordVectorEmbedder } from "../../../src/engine/models/word-vectors.js";

const e = new WordVectorEmbedder();
const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const sim = (a: string, b: string) => cos(e.vector(a), e.vector(b));
const norm = (v: Float32Array) => Math.sqrt(cos(v, v));

describe("WordVectorEmbedder (the shipped table)", () => {
  it("answers one 100-d unit vector per text, in order, the same for the same text", async () => {
    const vectors = await e.embed(["Caroline went hiking", "Melanie paints sunsets", "Caroline went hiking"]);
    expect(e.model).toBe(WORD_VECTORS_MODEL);
    expect(e.dimensions).toBe(100);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toHaveLength(100);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect([...vectors[2]!]).toEqual([...vectors[0]!]);
    expect(cos(vectors[0]!, vectors[1]!)).toBeLessThan(0.99);
  });

  it("puts texts that mean alike closer than texts that do not, without sharing a word", () => {
    const martial = "What martial arts has John practised?";
    expect(sim(martial, "I have been doing taekwondo for years")).toBeGreaterThan(
      sim(martial, "I went to the grocery store yesterday") + 0.2,
    );
    const countries = "Which European countries did she visit?";
    expect(sim(countries, "We had a great trip to Spain last summer")).toBeGreaterThan(
      sim(countries, "My cat knocked the vase off the table") + 0.2,
    );
  });

  it("weighs frequent words little: function words barely move a text", () => {
    expect(sim("adoption agencies", "the adoption agencies that we have")).toBeGreaterThan(0.9);
  });

  it("is all zeros for a text with no known word, and ignores case and punctuation", () => {
    expect([...e.vector("zzzqqq 12345 !!")].every((x) => x === 0)).toBe(true);
    expect([...e.vector("Pottery CLASS!")]).toEqual([...e.vector("pottery class")]);
  });

  it("embeds memories only, and its cosine counts low: nothing under 0.3, at most the default threshold", () => {
    expect(e.units).toBe("memories");
    expect(e.similarity(0.29)).toBe(0);
    expect(e.similarity(0.5)).toBeCloseTo(0.15, 6);
    expect(e.similarity(1)).toBeLessThanOrEqual(0.3);
  });

  it("says what to do when its table is missing, as soon as it is made", () => {
    expect(() => new WordVectorEmbedder("/nonexistent/word-vectors.bin")).toThrow(
      /word-vector table is missing \(\/nonexistent\/word-vectors\.bin\): reinstall memctx, or set MEMCTX_EMBEDDINGS=none/,
    );
  });

  it("refuses a file that is not its table, naming it", () => {
    const dir = mkdtempSync(join(tmpdir(), "memctx-wv-"));
    try {
      const bad = join(dir, "bad.bin");
      writeFileSync(bad, Buffer.alloc(64));
      expect(() => new WordVectorEmbedder(bad).vector("x")).toThrow(/bad\.bin is not a word-vector table/);
      // A truncated word list is caught too.
      const good = readFileSync(new URL("../../../assets/word-vectors.bin", import.meta.url));
      const cut = join(dir, "cut.bin");
      writeFileSync(cut, good.subarray(0, good.length - 50));
      expect(() => new WordVectorEmbedder(cut).vector("x")).toThrow(/the header says/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
