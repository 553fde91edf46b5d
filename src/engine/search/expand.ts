import { readFileSync } from "node:fs";
import { packageUrl } from "../../package-root.js";
import { attributeWordSets } from "../memory/extract/slots.js";
import { lookUp, type SortedLines, shippedLines, sortedLines } from "../text/sorted-lines.js";
import { type QueryTerm, stemTexts } from "../text/terms.js";

/**
 * Words that differ from the question: WordNet's synonyms and kinds (hyponyms, instances) of a
 * query's words and two-word phrases, from a table precompiled offline
 * (assets/wordnet-expansions.tsv, built by scripts/build-wordnet-expansions.ts from Princeton
 * WordNet 3.1). "martial arts" -> taekwondo, karate, judo; "European countries" -> Spain, France.
 * Meant as a second, weighted lexical pass: an expansion matches what the question means but
 * never says, so it counts less than the question's own words (its weight, at most 0.6).
 */

/**
 * Plain text, not gzip: inflating its 3.3 MB took a cold start's first search 20-60 ms, and npm's
 * tarball compresses it as well as gzip did.
 */
const ASSET = packageUrl("assets/wordnet-expansions.tsv");

/** An expansion of one query word or phrase. */
export interface WeightedTerm {
  /** A word or a two-word phrase ("kung fu"), lower case. */
  term: string;
  /** 0.6 a synonym, 0.5 a direct kind, 0.35 a kind of a kind, 0.25 one level further. */
  weight: number;
  /** The query word or phrase it expands ("martial art"). */
  from: string;
}

/**
 * Words memctx itself writes for a person, not their English sense: "The user" is how extraction
 * names the person a namespace remembers (memory/whose.ts), so "where does the user live?" asks
 * about that person. WordNet's kinds of a user (consumer, eater, drinker, vegetarian, smoker) would
 * rank "The user is vegetarian." as an answer to it.
 */
const NOT_EXPANDED: ReadonlySet<string> = new Set(["user", "users"]);

/** Most expansions one query gets, best weights first. */
export const MAX_EXPANSIONS = 80;

let table: SortedLines | null = null;

/** Head -> its raw "term:weight,..." list; read once, on the first expansion (3.3 MB of text). */
function load(path: URL | string): SortedLines {
  const text = readFileSync(path, "utf8");
  return path === ASSET ? shippedLines(text) : sortedLines(text);
}

/** The forms a (plural, inflected) word may have as a WordNet head: as is, then without its ending. */
function heads(word: string): string[] {
  const out = [word];
  if (word.endsWith("ies") && word.length > 4) out.push(`${word.slice(0, -3)}y`);
  if (/(?:s|x|z|ch|sh)es$/.test(word)) out.push(word.slice(0, -2));
  if (word.endsWith("s") && !word.endsWith("ss") && word.length > 3) out.push(word.slice(0, -1));
  return out;
}

function lookup(t: SortedLines, word: string, prefix = ""): { head: string; list: string } | null {
  for (const h of heads(word)) {
    const list = lookUp(t, prefix + h);
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
  const words = terms.map((t) => t.toLowerCase().trim()).filter((t) => t !== "" && !NOT_EXPANDED.has(t));
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
  const found = [...expandTerms(terms.map((t) => t.text)), ...attributeExpansions(terms)];
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

/**
 * Weight of a word of the same attribute as a query's word (memory/extract/attributes.ts): as a
 * direct kind's. "Where does the user live?" is answered by "The user moved to Braga in 2025." as
 * much as by "lives in": the extractor files both under one attribute, home.
 */
export const ATTRIBUTE_WEIGHT = 0.5;

let attributeSets: { stems: Set<string>; lemmas: readonly string[] }[] | null = null;

/** The other words of each attribute that a query's word belongs to (by stem: "lives", "moved"). */
export function attributeExpansions(terms: readonly QueryTerm[]): WeightedTerm[] {
  attributeSets ??= attributeWordSets().map(({ lemmas }) => {
    const stems = stemTexts([...lemmas]);
    return { stems: new Set(stems.flatMap((s) => (s.length === 1 ? s : []))), lemmas };
  });
  const out: WeightedTerm[] = [];
  for (const t of terms) {
    if (t.stems.length !== 1) continue;
    for (const set of attributeSets) {
      if (!set.stems.has(t.stems[0]!)) continue;
      for (const lemma of set.lemmas) out.push({ term: lemma, weight: ATTRIBUTE_WEIGHT, from: t.text });
    }
  }
  return out;
}
