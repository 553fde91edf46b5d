import type { Db } from "./connection.js";
import {
  type Bm25Constants,
  bm25Part,
  NUMBERS,
  type Posting,
  postingRows,
  postingsIn,
  type WeightedTerm,
} from "./search-index.js";
import { type Corpus, type Scope, topUnits, visibleRowids } from "./search-scope.js";

/*
 * Ranking a space's units by BM25 over a query's terms, as fast as each database allows: where the
 * postings are summed (in this process, or by the database) is the store's choice, made here from
 * the connection, never by a caller. Both ways sum the same terms of the same formula (search-index.ts
 * bm25Part) in the same order: their scores are the same.
 */

/** A unit's occurrences of one term: its text's and its context's counts, and its length. */
export interface TermHit {
  tf: number;
  tfContext: number;
  length: number;
}

/** A ranked unit: its rowid, its (partial) BM25 score and its length. */
export interface RankedUnit {
  rowid: number;
  bm25: number;
  length: number;
}

/** A ranked unit visible in the search's scope, with who said it (null: nobody). */
export type VisibleUnit = RankedUnit & { speaker: string | null };

/**
 * Each unit's hit for a term from the postings of its stems: a one-stem term is its stem's
 * posting; a phrase needs every stem in the unit and counts its rarest one's occurrences.
 */
export function termHits(
  term: { stems: readonly string[] },
  byStem: ReadonlyMap<string, Map<number, Posting>>,
): Map<number, TermHit> {
  const lists = term.stems.map((s) => byStem.get(s) ?? new Map<number, Posting>());
  const [first, ...rest] = lists.sort((a, b) => a.size - b.size);
  const out = new Map<number, TermHit>();
  if (!first) return out;
  for (const [unit, p] of first) {
    let tf = p.tf;
    let tfContext = p.tfContext;
    let all = true;
    for (const list of rest) {
      const q = list.get(unit);
      if (!q) {
        all = false;
        break;
      }
      tf = Math.min(tf, q.tf);
      tfContext = Math.min(tfContext, q.tfContext);
    }
    if (all) out.set(unit, { tf, tfContext, length: p.length });
  }
  return out;
}

/** Postings by stem, then by unit. */
export function byStem(postings: readonly Posting[]): Map<string, Map<number, Posting>> {
  const out = new Map<string, Map<number, Posting>>();
  for (const p of postings) {
    const list = out.get(p.term) ?? new Map<number, Posting>();
    list.set(p.unit, p);
    out.set(p.term, list);
  }
  return out;
}

/** BM25's part of one term in a unit, on numbers (search-index.ts bm25Part: the one formula). */
export function termScore(w: Bm25Constants, idf: number, hit: TermHit, averageLength: number): number {
  return bm25Part(NUMBERS, w, averageLength || 1, idf, hit.tf, hit.tfContext, hit.length);
}

/** What a ranking reads: the search's scope, how many visible units it wants, the space's average length. */
export interface RankingAt {
  scope: Scope;
  count: number;
  averageLength: number;
}

/**
 * The best `at.count` units of the space visible in the scope for the given terms alone, by their
 * partial BM25 (each term's idf given), best first. In process (SQLite) every posting of the terms
 * is read and summed here, which is the faster way (at 100k memories, search p50 9.2 against
 * 10.1-10.7 ms with the sums in SQLite, bench/.prof search-rss); across a wire (PostgreSQL) the
 * database sums them, so that only the best rows cross it.
 */
export async function topVisibleUnits(
  db: Db,
  corpus: Corpus,
  space: number,
  terms: readonly { stems: readonly string[]; idf: number }[],
  at: RankingAt,
  w: Bm25Constants,
): Promise<VisibleUnit[]> {
  if (terms.length === 0) return [];
  return db.dialect.remote
    ? await summedByDatabase(db, corpus, space, terms, at, w)
    : await summedHere(db, corpus, space, terms, at, w);
}

/** topVisibleUnits with the sums taken here, from every posting of the terms. */
async function summedHere(
  db: Db,
  corpus: Corpus,
  space: number,
  terms: readonly { stems: readonly string[]; idf: number }[],
  at: RankingAt,
  w: Bm25Constants,
): Promise<VisibleUnit[]> {
  const rows = await postingRows(
    db,
    space,
    terms.flatMap((t) => t.stems),
  );
  const scores = new Map<number, RankedUnit>();
  const add = (unit: number, part: number, length: number) => {
    const s = scores.get(unit);
    if (s) s.bm25 += part;
    else scores.set(unit, { rowid: unit, bm25: part, length });
  };
  // One-stem terms (nearly all) score straight from their rows; phrases need their stems together.
  const idfOf = new Map<string, number>();
  for (const { stems, idf } of terms) if (stems.length === 1) idfOf.set(stems[0]!, idf);
  for (const [unit, stem, tf, tfContext, length] of rows) {
    const idf = idfOf.get(stem);
    if (idf !== undefined) add(unit, termScore(w, idf, { tf, tfContext, length }, at.averageLength), length);
  }
  const phrases = terms.filter((t) => t.stems.length > 1);
  if (phrases.length > 0) {
    const postings = byStem(
      rows.map(([unit, term, tf, tfContext, length]) => ({ unit, term, tf, tfContext, length })),
    );
    for (const phrase of phrases) {
      for (const [unit, hit] of termHits(phrase, postings))
        add(unit, termScore(w, phrase.idf, hit, at.averageLength), hit.length);
    }
  }
  const ranked = [...scores.values()].sort((a, b) => b.bm25 - a.bm25 || a.rowid - b.rowid);
  return await firstVisible(at.count, async (from, size) => {
    const rows = ranked.slice(from, from + size);
    const visible = await visibleRowids(
      db,
      corpus,
      rows.map((r) => r.rowid),
      at.scope,
    );
    return { rows, visible };
  });
}

/**
 * topVisibleUnits with the sums taken by the database (search-scope.ts topUnits): only the best
 * rows of each page come back, not every posting, with their visibility in the same statement.
 */
async function summedByDatabase(
  db: Db,
  corpus: Corpus,
  space: number,
  terms: readonly WeightedTerm[],
  at: RankingAt,
  w: Bm25Constants,
): Promise<VisibleUnit[]> {
  const weights = { ...w, averageLength: at.averageLength || 1 };
  return await firstVisible(at.count, async (from, size) => {
    const page = await topUnits(db, corpus, at.scope, space, terms, weights, size, from);
    return {
      rows: page.map(([rowid, bm25, length]) => ({ rowid, bm25, length })),
      visible: new Map(page.filter((u) => u[3] === 1).map((u) => [u[0], u[4]])),
    };
  });
}

/**
 * The first `count` rows of a ranking, read a page at a time (`page(from, size)`: the rows and
 * those of them visible in the search's scope (status, latest, forgotten, filter) with their
 * speakers): each next page 8 times the last, only while too few were.
 */
async function firstVisible(
  count: number,
  page: (from: number, size: number) => Promise<{ rows: RankedUnit[]; visible: Map<number, string | null> }>,
): Promise<VisibleUnit[]> {
  const out: VisibleUnit[] = [];
  let from = 0;
  let size = count;
  for (;;) {
    const { rows, visible } = await page(from, size);
    for (const r of rows) {
      const speaker = visible.get(r.rowid);
      if (speaker !== undefined) out.push({ ...r, speaker });
      if (out.length >= count) return out;
    }
    if (rows.length < size) return out;
    from += size;
    size *= 8;
  }
}

/**
 * A stem held by at most this many rows per candidate is read whole (its rows in the candidates
 * kept) rather than looked up once per candidate: a look-up costs about what reading three rows of
 * a list in order does. Measured at 100k memories (bench/.prof search, 300 questions, the same
 * scores): 2.5-3.0 ms per call with look-ups only, 2.0-2.2 ms with 3; 10 and 30 read too much.
 */
const LOOKUPS_PER_ROW_READ = 3;

/**
 * The postings of `stems` in the given units (a search's candidates), read the cheaper way for
 * the database: in process, a short list whole and a long one by look-ups per unit; across a wire,
 * by look-ups per stem and unit (search-index.ts postingsIn), whatever the number of stems.
 * `holding`: the units of the space holding each stem.
 */
export async function postingsOfUnits(
  db: Db,
  space: number,
  units: ReadonlySet<number>,
  stems: readonly string[],
  holding: ReadonlyMap<string, number>,
): Promise<Posting[]> {
  const remote = db.dialect.remote;
  const short = (stem: string) => !remote && (holding.get(stem) ?? 0) <= LOOKUPS_PER_ROW_READ * units.size;
  const read = (await postingRows(db, space, stems.filter(short)))
    .filter(([unit]) => units.has(unit))
    .map(([unit, term, tf, tfContext, length]) => ({ unit, term, tf, tfContext, length }));
  const looked = await postingsIn(
    db,
    space,
    [...units],
    stems.filter((s) => !short(s)),
  );
  return [...read, ...looked];
}
