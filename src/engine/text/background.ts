import { readFileSync } from "node:fs";
import { packageUrl } from "../../package-root.js";
import { lookUp, type SortedLines, shippedLines } from "./sorted-lines.js";
import { stemTexts } from "./terms.js";

/**
 * How common a stem is in English at large: the background that search statistics start from, so
 * that a namespace of one document ranks words by rarity as one of 100k does, and no statistic
 * comes from another namespace.
 *
 * The word-vector table (assets/word-vectors.bin) lists GloVe 6B's 50k most frequent words in
 * frequency order. By Zipf's law a word of rank r is about 0.1 / r of running text, so a unit of
 * about UNIT_TOKENS tokens holds it with probability 1 - (1 - 0.1/r)^UNIT_TOKENS. A stem takes
 * its most frequent word's rank; a stem the table lacks (names, rare and invented words) counts
 * as rarer than all of them.
 */

/** The word-vector table shipped with the package. */
export const WORD_TABLE = packageUrl("assets/word-vectors.bin");

/**
 * The stems of that table's words with their ranks, as `stemRanksOf` makes them, built by
 * scripts/build-stem-ranks.ts: lines "stem<TAB>rank" in order of the stems (binary search). Stemming the 50k words at start cost the first
 * search about 0.8 s and the process's heap about 40 MiB; reading this file costs a few ms.
 */
export const STEM_RANKS = packageUrl("assets/stem-ranks.tsv");

/** Typical tokens in a unit (a turn or a memory), for the chance that a unit holds a word. */
const UNIT_TOKENS = 20;

/** The rank given to stems outside the table: past its 50k words. */
const UNKNOWN_RANK = 100_000;

/** Words stemmed per call while building the ranks. */
const STEM_SLICE = 2_000;

let ranks: SortedLines | null = null;

/** The words of the word-vector table, in frequency order (its header: magic, version, count, dimensions). */
export function tableWords(path: URL | string = WORD_TABLE): string[] {
  const buf = readFileSync(path);
  const header = new Uint32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + 16));
  const count = header[2] ?? 0;
  const dims = header[3] ?? 0;
  const at = 16 + dims * 4 + count * 4 + count * dims;
  return buf.subarray(at).toString("utf8").split("\n");
}

/** Stem -> rank of its most frequent word (1-based), by the index's own tokenizer. */
export function stemRanksOf(words: readonly string[]): Map<string, number> {
  const map = new Map<string, number>();
  // A slice at a time: stemming all 50k words at once made V8 grow its heap by about 40 MiB for the
  // moment, and keep it (the process's RSS).
  for (let from = 0; from < words.length; from += STEM_SLICE) {
    stemTexts(words.slice(from, from + STEM_SLICE)).forEach((s, i) => {
      const stem = s[0];
      if (stem && !map.has(stem)) map.set(stem, from + i + 1);
    });
  }
  return map;
}

/** Stem -> rank, read once per process from the built file; an empty table when it cannot be read. */
function stemRanks(): SortedLines {
  if (ranks) return ranks;
  try {
    ranks = shippedLines(readFileSync(STEM_RANKS, "utf8"));
  } catch {
    // Without the table every stem counts as rare: statistics rest on the namespace alone.
    ranks = shippedLines("");
  }
  return ranks;
}

/** The chance that a unit of ordinary English text holds the stem. */
export function backgroundUnitShare(stem: string): number {
  const rank = Number(lookUp(stemRanks(), stem) ?? UNKNOWN_RANK);
  const perToken = Math.min(0.5, 0.1 / rank);
  return 1 - (1 - perToken) ** UNIT_TOKENS;
}
