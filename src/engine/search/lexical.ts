import type { Db } from "../store/connection.js";
import {
  termScore as bm25TermScore,
  byStem,
  postingsOfUnits,
  type RankedUnit,
  termHits,
  topVisibleUnits,
  type VisibleUnit,
} from "../store/ranking.js";
import {
  type Bm25Constants,
  type SearchSpace,
  type SpaceStatistics,
  searchStatistics,
} from "../store/search-index.js";
import type { Corpus, Scope } from "../store/search-scope.js";
import { backgroundUnitShare } from "../text/background.js";
import type { QueryTerm } from "../text/terms.js";

/** A row that matched the query's terms, with its BM25 score (higher is better). */
export interface LexicalCandidate {
  rowid: number;
  bm25: number;
}

export interface LexicalResult {
  candidates: LexicalCandidate[];
  /**
   * The sum over the query's terms of their idf: the BM25 score of a row of average length holding
   * every term once. Fusion divides by it (see fusion.ts).
   */
  idfSum: number;
  /** The idf of each query term, in the order of the terms. */
  termIdf: number[];
}

/** BM25's constants (as FTS5's bm25() had them). */
const K1 = 1.2;
const B = 0.75;
/** BM25's k1 + 1: the most one term can add to a row's score, in units of its idf (tf → ∞). */
const MAX_TERM_WEIGHT = K1 + 1;

/** Below this, a term's part of a score (at most 2.2 · idf) is left out of corrections. */
const NEGLIGIBLE_IDF = 1e-3;

/**
 * BM25 weight of the context column (the turns around a unit) against the unit's own text (1):
 * RECIPE.md step 3, measured best on LoCoMo.
 */
export const CONTEXT_WEIGHT = 0.3;

/**
 * Pseudo-units of ordinary English that every namespace's statistics start from (see
 * text/background.ts). They give a namespace of one document the idf ranking of a large one
 * (a word absent from it is not rarer than one it holds once: both are as rare as English makes
 * them), and weigh little once the namespace holds many more units than this. LoCoMo hybrid at
 * 3000 characters, statistics per namespace: 0.789 / 0.794 / 0.796 / 0.795 / 0.795 at 300 / 1k /
 * 3k / 10k / 30k (bench/locomo/run.ts --engine).
 */
export const BACKGROUND_UNITS = 3_000;

/** BM25's idf, ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6 for terms in over half the units. */
export function bm25Idf(rows: number, hits: number): number {
  const idf = Math.log((rows - hits + 0.5) / (hits + 0.5));
  return idf > 0 ? idf : 1e-6;
}

/**
 * A term's idf in a space: its units among the space's, each count raised by BACKGROUND_UNITS
 * units of ordinary text that hold it as often as English does. Depends on this namespace alone.
 */
function termIdf(space: SearchSpace | null, units: number, term: QueryTerm): number {
  // A term the tokenizer splits in two is a phrase: its rarest part bounds it.
  const share = Math.min(...term.stems.map(backgroundUnitShare));
  return bm25Idf((space?.units ?? 0) + BACKGROUND_UNITS, units + BACKGROUND_UNITS * share);
}

/**
 * Share of a namespace's units above which a term is in nearly all of them: in a user's own
 * namespace "The user ..." opens almost every memory, as a speaker's name opens every turn of a
 * monologue. English makes such a word rare (BACKGROUND_UNITS), yet here it tells no unit apart.
 */
export const UBIQUITOUS_SHARE = 0.75;
/** Units a space needs before any term is called ubiquitous in it (one memory holds all its words). */
const UBIQUITY_MIN_UNITS = 3;

/**
 * What a ubiquitous term (see UBIQUITOUS_SHARE) counts at most, as a share of the smallest idf of
 * the query's terms that are not: it says whom or what the query is about, which nearly every
 * unit is; what the query asks is in its other words, and they must weigh more.
 */
export const UBIQUITOUS_WEIGHT = 0.5;

/**
 * The query's own idfs with each ubiquitous term's capped (UBIQUITOUS_WEIGHT): "where does the
 * user live?" then ranks "The user moved to Braga" (user, and "move" for "live") above "The user
 * is vegetarian" (user alone, a short row), which a rare-looking "user" ranked above it. A query
 * of ubiquitous terms only keeps them as they are: they are all it asks.
 */
function capUbiquitous(idf: number[], frequency: readonly number[], space: SearchSpace | null): number[] {
  if (!space || space.units < UBIQUITY_MIN_UNITS) return idf;
  const ubiquitous = idf.map((_, i) => frequency[i]! > UBIQUITOUS_SHARE * space.units);
  const telling = idf.filter((_, i) => !ubiquitous[i]);
  if (telling.length === 0 || telling.length === idf.length) return idf;
  const cap = UBIQUITOUS_WEIGHT * Math.min(...telling);
  return idf.map((v, i) => (ubiquitous[i] ? Math.min(v, cap) : v));
}

/**
 * Postings a query reads at most (a microsecond or two each, from SQLite to a score). Namespaces
 * under this many matching rows per query are ranked exactly. At 100k memories (the speed corpus,
 * in process) search p50 / p95 was 14.5 / 28.4 ms at 5,000 and 12.8 / 20.9 ms at 2,500; LoCoMo
 * (conversations under 2,500 units) is the same at both (0.800 hybrid at 3000 characters).
 */
export const SCORED_ROWS_BUDGET = 2_500;

export interface LexicalOptions {
  /** The similarity a hit needs (see fusion.ts); terms that cannot matter for it are not matched. */
  threshold?: number;
  /** Rows that may be scored; SCORED_ROWS_BUDGET by default. */
  budget?: number;
  /**
   * The people the query names (see person.ts): a row said by someone else (its `speaker` set and
   * not among them) has its score multiplied by `factor` before the best rows are kept.
   */
  person?: { names: ReadonlySet<string>; factor: number } | undefined;
  /**
   * Words the query means without saying them (expand.ts: WordNet's synonyms and kinds), each
   * scored as a query term whose idf counts `weight` times: a row holding "taekwondo" answers
   * "martial arts", below one holding the query's own words. They add to rows' scores, not to
   * the query's idf sum (a query is not harder to answer for having synonyms).
   */
  expansions?: readonly { term: QueryTerm; weight: number }[] | undefined;
  /**
   * The corpus's space and its units holding each stem of the terms and expansions, when the
   * caller has read them already (store searchStatistics, one read for both corpora); else read here.
   */
  statistics?: SpaceStatistics | undefined;
}

/** BM25's constants, as the store's bm25Part takes them. */
const BM25: Bm25Constants = { k1: K1, b: B, contextWeight: CONTEXT_WEIGHT };

/** BM25's part of one term in a unit (the store's bm25Part, on numbers: the one formula). */
function termScore(
  idf: number,
  hit: { tf: number; tfContext: number; length: number },
  averageLength: number,
) {
  return bm25TermScore(BM25, idf, hit, averageLength);
}

/**
 * The best `want` rows of `corpus` visible in `scope` for the query's terms, by BM25 over all of
 * them, with the namespace's own statistics (and the background's, see BACKGROUND_UNITS).
 *
 * Reading a common word's postings costs its document frequency, so:
 * 1. Terms that cannot lift a row to the threshold are not read. A row gains at most 2.2 · idf
 *    from a term (k1 + 1, tf → ∞), and a hit's similarity is at most 2.2 · sqrt(score share)
 *    (fusion.ts), so the commonest terms holding less than (threshold / 2.2)² of the query's idf
 *    cannot make a hit alone.
 * 2. Of the rest, the rarest are read while their postings fit the budget (at least one term; more
 *    while too few rows are found). A row holding only terms left out here can be missed; rows
 *    holding any read term are ranked exactly. This is the one approximation, and only for queries
 *    whose terms hold more rows than the budget.
 * The parts of the terms left out are then added to the best rows from their postings (point
 * look-ups), so each returned score is the BM25 of the whole query.
 */
export async function lexicalSearch(
  db: Db,
  corpus: Corpus,
  terms: readonly QueryTerm[],
  scope: Scope,
  want: number,
  opts: LexicalOptions = {},
): Promise<LexicalResult> {
  if (terms.length === 0 || want <= 0) return { candidates: [], idfSum: 0, termIdf: terms.map(() => 0) };
  const own = terms.length;
  const expansions = opts.expansions ?? [];
  const all = [...terms, ...expansions.map((e) => e.term)];
  const weight = [...terms.map(() => 1), ...expansions.map((e) => e.weight)];
  const { space, holding: counts } =
    opts.statistics ??
    (
      await searchStatistics(
        db,
        scope.namespaceId,
        all.flatMap((t) => t.stems),
      )
    )[corpus];
  const frequency = all.map((t) => Math.min(...t.stems.map((s) => counts.get(s) ?? 0)));
  const idf = all.map((t, i) => weight[i]! * termIdf(space, frequency[i]!, t));
  capUbiquitous(idf.slice(0, own), frequency, space).forEach((v, i) => {
    idf[i] = v;
  });
  const total = idf.slice(0, own).reduce((a, b) => a + b, 0);
  const result = (candidates: LexicalCandidate[]): LexicalResult => ({
    candidates: candidates.slice(0, want),
    idfSum: total,
    termIdf: idf.slice(0, own),
  });
  if (!space || space.units === 0) return result([]);
  const averageLength = space.length / space.units;
  const rarestFirst = all.map((_, i) => i).sort((a, b) => idf[b]! - idf[a]! || a - b);
  // 1. The commonest terms that together cannot make a hit.
  const needed = ((opts.threshold ?? 0) / MAX_TERM_WEIGHT) ** 2 * total;
  let worth = rarestFirst.length;
  let mass = 0;
  while (worth > 1 && mass + idf[rarestFirst[worth - 1]!]! < needed) mass += idf[rarestFirst[--worth]!]!;
  // 2. The rarest of the others, within the budget.
  const budget = opts.budget ?? SCORED_ROWS_BUDGET;
  let matched = 0;
  let rows = 0;
  while (matched < worth && (matched === 0 || rows + frequency[rarestFirst[matched]!]! <= budget)) {
    rows += frequency[rarestFirst[matched++]!]!;
  }
  const weighsSpeakers = opts.person !== undefined && opts.person.names.size > 0;
  for (;;) {
    // A term no unit holds (a phrase whose word some unit lacks) adds to no score: not read.
    const read = rarestFirst.slice(0, matched).filter((i) => frequency[i]! > 0);
    // A term in over half the rows has its idf floored at 1e-6: its part is not worth reading.
    const leftOut = rarestFirst
      .slice(matched)
      .filter((i) => frequency[i]! > 0)
      .map((i) => ({ term: all[i]!, idf: idf[i]! }))
      .filter((l) => l.idf > NEGLIGIBLE_IDF);
    // Rows kept for the left-out terms' parts and the speakers' weights to reorder; without
    // either, the best `want` are the answer (and no more rows are checked for visibility).
    const window = leftOut.length > 0 || weighsSpeakers ? Math.max(4 * want, 60) : want;
    const candidates = await topVisibleUnits(
      db,
      corpus,
      space.id,
      read.map((i) => ({ stems: all[i]!.stems, idf: idf[i]! })),
      { scope, count: window, averageLength },
      BM25,
    );
    if (candidates.length < want && matched < worth) {
      matched++;
      continue;
    }
    if (leftOut.length > 0 && candidates.length > 0) {
      await addLeftOutTerms(db, space.id, candidates, leftOut, averageLength, counts);
    }
    if (weighsSpeakers && candidates.length > 0) {
      weighSpeakers(candidates, opts.person!.names, opts.person!.factor);
    }
    return result(candidates.map(({ rowid, bm25 }) => ({ rowid, bm25 })));
  }
}

/** A candidate and its length (for the left-out terms' parts). */
type Scored = RankedUnit;
/** A visible candidate, with who said it (null: nobody), read with its visibility. */
type Visible = VisibleUnit;

/** Adds to each candidate the parts of the terms that were not read, from their postings in it. */
async function addLeftOutTerms(
  db: Db,
  space: number,
  candidates: Scored[],
  leftOut: readonly { term: QueryTerm; idf: number }[],
  averageLength: number,
  /** Rows holding each stem (the namespace's document frequencies). */
  holding: ReadonlyMap<string, number>,
): Promise<void> {
  const stems = [...new Set(leftOut.flatMap((l) => l.term.stems))];
  const units = new Set(candidates.map((c) => c.rowid));
  const postings = byStem(await postingsOfUnits(db, space, units, stems, holding));
  for (const { term, idf } of leftOut) {
    const hits = termHits(term, postings);
    for (const c of candidates) {
      const hit = hits.get(c.rowid);
      if (hit) c.bm25 += termScore(idf, { ...hit, length: c.length }, averageLength);
    }
  }
  candidates.sort((a, b) => b.bm25 - a.bm25 || a.rowid - b.rowid);
}

/** Multiplies by `factor` the score of each candidate said by someone not in `names`; re-sorts. */
function weighSpeakers(candidates: Visible[], names: ReadonlySet<string>, factor: number): void {
  let changed = false;
  for (const c of candidates) {
    if (c.speaker !== null && !names.has(c.speaker)) {
      c.bm25 *= factor;
      changed = true;
    }
  }
  if (changed) candidates.sort((a, b) => b.bm25 - a.bm25 || a.rowid - b.rowid);
}
