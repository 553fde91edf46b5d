import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { type QueryTerm, stemTexts } from "../text/terms.js";

/**
 * Words that differ from the question: WordNet's synonyms and kinds (hyponyms, instances) of a
 * query's words and two-word phrases, from a table precompiled offline
 * (assets/wordnet-expansions.tsv.gz, built by scripts/build-wordnet-expansions.ts from Princeton
 * WordNet 3.1). "martial arts" -> taekwondo, karate, judo; "European countries" -> Spain, France.
 * Meant as a second, weighted lexical pass: an expansion matches what the question means but
 * never says, so it counts less than the question's own words (its weight, at most 0.6).
 */

const ASSET = new URL("../../../assets/wordnet-expansions.tsv.gz", import.meta.url);

/** An expansion of one query word or phrase. */
export interface WeightedTerm {
  /** A word or a two-word phrase ("kung fu"), lower case. */
  term: string;
  /** 0.6 a synonym, 0.5 a direct kind, 0.35 a kind of a kind, 0.25 one level further. */
  weight: number;
  /** The query word or phrase it expands ("martial art"). */
  from: string;
}

/** Most expansions one query gets, best weights first. */
export const MAX_EXPANSIONS = 80;

/**
 * The table as read: its text, one line a head ("head<TAB>term:weight,..."), with the lines in
 * ascending order of their heads (as JavaScript compares strings: the shipped file is), and where
 * each line starts. A head is found by binary search: a Map of its 33k heads held about
 * 8 MiB more of the process's memory and took longer to build.
 */
interface Table {
  text: string;
  starts: Int32Array;
}

let table: Table | null = null;

/** Reads the table once, on the first expansion (~1 MB gzip, 3.3 MB of text). */
function load(path: URL | string): Table {
  const text = gunzipSync(readFileSync(path)).toString("utf8");
  const t = indexLines(text);
  if (inOrder(t)) return t;
  // A table written in another order (the shipped one is in order): put in order once.
  const head = (line: string) => line.slice(0, line.indexOf("\t") >>> 0);
  const lines = text.split("\n").filter((l) => l !== "");
  return indexLines(lines.sort((a, b) => (head(a) < head(b) ? -1 : head(a) > head(b) ? 1 : 0)).join("\n"));
}

function indexLines(text: string): Table {
  const starts: number[] = [];
  for (let at = 0; at < text.length; ) {
    starts.push(at);
    const end = text.indexOf("\n", at);
    if (end < 0) break;
    at = end + 1;
  }
  return { text, starts: Int32Array.from(starts) };
}

const headAt = (t: Table, i: number): string => {
  const start = t.starts[i]!;
  const newline = t.text.indexOf("\n", start);
  const end = newline < 0 ? t.text.length : newline;
  const tab = t.text.indexOf("\t", start);
  return t.text.slice(start, tab < 0 || tab > end ? end : tab);
};

/** Whether each head comes after the one before (a binary search finds every head then). */
function inOrder(t: Table): boolean {
  let previous = "";
  for (let i = 0; i < t.starts.length; i++) {
    const head = headAt(t, i);
    if (i > 0 && !(previous < head)) return false;
    previous = head;
  }
  return true;
}

/** The raw "term:weight,..." list of `head`, or undefined when the table has no such head. */
function listOf(t: Table, head: string): string | undefined {
  let lo = 0;
  let hi = t.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const key = headAt(t, mid);
    if (key < head) lo = mid + 1;
    else if (key > head) hi = mid - 1;
    else {
      const start = t.starts[mid]! + key.length;
      const newline = t.text.indexOf("\n", start);
      return t.text[start] === "\t"
        ? t.text.slice(start + 1, newline < 0 ? t.text.length : newline)
        : undefined;
    }
  }
  return undefined;
}

/** The forms a (plural, inflected) word may have as a WordNet head: as is, then without its ending. */
function heads(word: string): string[] {
  const out = [word];
  if (word.endsWith("ies") && word.length > 4) out.push(`${word.slice(0, -3)}y`);
  if (/(?:s|x|z|ch|sh)es$/.test(word)) out.push(word.slice(0, -2));
  if (word.endsWith("s") && !word.endsWith("ss") && word.length > 3) out.push(word.slice(0, -1));
  return out;
}

function lookup(t: Table, word: string, prefix = ""): { head: string; list: string } | null {
  for (const h of heads(word)) {
    const list = listOf(t, prefix + h);
    if (list !== undefined) return { head: prefix + h, list };
  }
  return null;
}

/**
 * Expansions of a query's terms (its informative words, in order): each adjacent pair is tried
 * as a phrase first ("martial arts"), and a word a phrase covered is not expanded alone (its
 * kinds are the phrase's business: "art" alone would bring "mosaic"). The terms themselves never
 * come back; each expansion keeps its best weight.
 */
export function expandTerms(
  terms: readonly string[],
  opts: { max?: number; path?: URL | string } = {},
): WeightedTerm[] {
  if (opts.path !== undefined) table = load(opts.path);
  table ??= load(ASSET);
  const words = terms.map((t) => t.toLowerCase().trim()).filter((t) => t !== "");
  const own = new Set(words);
  const found: { head: string; list: string }[] = [];
  const covered = new Set<number>();
  for (let i = 0; i + 1 < words.length; i++) {
    const phrase = lookup(table, words[i + 1]!, `${words[i]} `);
    if (phrase) {
      found.push(phrase);
      covered.add(i).add(i + 1);
    }
  }
  words.forEach((w, i) => {
    if (covered.has(i)) return;
    const single = lookup(table!, w);
    if (single) found.push(single);
  });
  const best = new Map<string, WeightedTerm>();
  for (const { head, list } of found) {
    for (const item of list.split(",")) {
      const colon = item.lastIndexOf(":");
      const term = item.slice(0, colon);
      const weight = Number(item.slice(colon + 1));
      if (own.has(term) || heads(term).some((h) => own.has(h))) continue;
      const seen = best.get(term);
      if (!seen || seen.weight < weight) best.set(term, { term, weight, from: head });
    }
  }
  return [...best.values()]
    .sort((a, b) => b.weight - a.weight || (a.term < b.term ? -1 : 1))
    .slice(0, opts.max ?? MAX_EXPANSIONS);
}

/**
 * The query's expansions as index terms (stemmed as the index stems), each with its weight, none
 * that stands for a word the query already holds: what lexical search scores beside the query.
 */
export function expansionTerms(terms: readonly QueryTerm[]): { term: QueryTerm; weight: number }[] {
  const found = expandTerms(terms.map((t) => t.text));
  const stems = stemTexts(found.map((e) => e.term));
  const seen = new Set(terms.map((t) => t.stems.join(" ")));
  const out: { term: QueryTerm; weight: number }[] = [];
  found.forEach((e, i) => {
    const s = stems[i] ?? [];
    const key = s.join(" ");
    if (s.length === 0 || seen.has(key)) return;
    seen.add(key);
    out.push({ term: { text: e.term, stems: s }, weight: e.weight });
  });
  return out;
}
