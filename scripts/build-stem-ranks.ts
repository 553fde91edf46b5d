/**
 * Builds assets/stem-ranks.tsv, the background frequency of every stem (src/engine/text/background.ts):
 * the word-vector table's words stemmed by SQLite's porter unicode61 tokenizer, each stem with the
 * rank of its most frequent word. Read at the first search instead of stemming 50k words there.
 * Rebuild it when assets/word-vectors.bin changes (a test compares the two).
 *
 *   npx tsx scripts/build-stem-ranks.ts
 */
import { writeFileSync } from "node:fs";
import { STEM_RANKS, stemRanksOf, tableWords } from "../src/engine/text/background.js";

const ranks = stemRanksOf(tableWords());
// In order of the stems, as JavaScript compares strings: looked up by binary search.
const lines = [...ranks].sort(([a], [b]) => (a < b ? -1 : 1)).map(([stem, rank]) => `${stem}\t${rank}`);
writeFileSync(STEM_RANKS, `${lines.join("\n")}\n`);
console.log(`${ranks.size} stems written to ${STEM_RANKS.pathname}`);
