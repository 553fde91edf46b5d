import type { DatabaseSync, StatementSync } from "node:sqlite";
import { type Corpus, type Scope, visibleRowids } from "./scope.js";
import { matchExpression, type QueryTerm, stemWords, termFrequency } from "./terms.js";

/** A row that matched the query's terms, with its BM25 score made positive (higher is better). */
export interface LexicalCandidate {
  rowid: number;
  bm25: number;
}

export interface LexicalResult {
  candidates: LexicalCandidate[];
  /**
   * The sum over the query's terms of FTS5's own idf: the BM25 score of a row of average length
   * holding every term once. Fusion divides by it (see fusion.ts).
   */
  idfSum: number;
  /** FTS5's idf of each query term, in the order of the terms. */
  termIdf: number[];
}

/** Below this, a term's part of a score (at most 2.2 · idf) is left out of corrections. */
const NEGLIGIBLE_IDF = 1e-3;

/** FTS5's bm25() constants. */
const K1 = 1.2;
const B = 0.75;
/** BM25's k1 + 1: the most one term can add to a row's score, in units of its idf (tf → ∞). */
const MAX_TERM_WEIGHT = K1 + 1;

/**
 * BM25 weight of the context column (the turns around a unit) against the unit's own text (1):
 * RECIPE.md step 3, measured best on LoCoMo.
 */
export const CONTEXT_WEIGHT = 0.3;

const FTS: Record<Corpus, string> = { chunks: "chunks_fts", memories: "memories_fts" };
/** The table behind each index and its two indexed columns. */
const CONTENT: Record<Corpus, { table: string; text: string }> = {
  chunks: { table: "chunks", text: "text" },
  memories: { table: "memories", text: "memory" },
};

interface Statements {
  match: StatementSync;
  averages: StatementSync;
  docFrequency: StatementSync;
  /** Text, context and token counts of candidate rows (rowids as a JSON array). */
  rowsToCorrect: StatementSync;
  /** Speakers of candidate rows (rowids as a JSON array). */
  speakers: StatementSync;
  version: StatementSync;
  changes: StatementSync;
  /** Document frequency of stems, valid while `cachedAt` is the data version. */
  frequencies: Map<string, number>;
  cachedAt: string;
}

const statements = new WeakMap<DatabaseSync, Map<Corpus, Statements>>();

function prepared(db: DatabaseSync, corpus: Corpus): Statements {
  let perDb = statements.get(db);
  if (!perDb) {
    perDb = new Map();
    statements.set(db, perDb);
  }
  let s = perDb.get(corpus);
  if (!s) {
    const fts = FTS[corpus];
    // A per-connection vocabulary view of the index (temp: nothing is added to the file).
    db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS temp.memctx_${fts}_rows USING fts5vocab(main, ${fts}, 'row')`,
    );
    s = {
      // bm25() ordered by SQLite's sorter with a LIMIT (a bounded heap): measured a third faster
      // than FTS5's own ORDER BY rank path.
      match: db.prepare(
        `SELECT rowid, bm25(${fts}, 1.0, ${CONTEXT_WEIGHT}) AS rank FROM ${fts} WHERE ${fts} MATCH ? ORDER BY rank LIMIT ?`,
      ),
      // FTS5's "averages" record: a varint row count, then the token count of each column.
      averages: db.prepare(`SELECT block FROM ${fts}_data WHERE id = 1`),
      docFrequency: db.prepare(`SELECT doc FROM temp.memctx_${fts}_rows WHERE term = ?`),
      rowsToCorrect: db.prepare(
        `SELECT j.value AS rowid, t.${CONTENT[corpus].text} AS text, t.context AS context, z.sz AS size
         FROM json_each(?) j CROSS JOIN ${CONTENT[corpus].table} t ON t.rowid = j.value
         LEFT JOIN ${fts}_docsize z ON z.id = j.value`,
      ),
      speakers: db.prepare(
        `SELECT j.value AS rowid, t.speaker AS speaker
         FROM json_each(?) j CROSS JOIN ${CONTENT[corpus].table} t ON t.rowid = j.value`,
      ),
      version: db.prepare("PRAGMA data_version"),
      changes: db.prepare("SELECT total_changes() AS n"),
      frequencies: new Map(),
      cachedAt: "",
    };
    perDb.set(corpus, s);
  }
  return s;
}

/** SQLite's varints (big-endian groups of 7 bits, a 9th byte of 8), as FTS5 writes its records. */
function readVarints(bytes: Uint8Array, count: number): number[] {
  const out: number[] = [];
  let i = 0;
  while (out.length < count && i < bytes.length) {
    let v = 0;
    for (let n = 0; i < bytes.length; n++) {
      const b = bytes[i++]!;
      if (n === 8) {
        v = v * 256 + b;
        break;
      }
      v = v * 128 + (b & 0x7f);
      if ((b & 0x80) === 0) break;
    }
    out.push(v);
  }
  return out;
}

/** Columns of every search index (text, context). */
const COLUMNS = 2;

/**
 * Rows in the index and their average length in tokens (all columns together), as FTS5's bm25()
 * counts them.
 */
function indexAverages(s: Statements): { rows: number; averageLength: number } {
  const row = s.averages.get() as { block: Uint8Array } | undefined;
  const [rows = 0, ...tokens] = row?.block ? readVarints(row.block, 1 + COLUMNS) : [];
  const total = tokens.reduce((a, b) => a + b, 0);
  return { rows, averageLength: rows > 0 ? total / rows : 0 };
}

/** FTS5's idf: ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6 as bm25() floors it. */
export function fts5Idf(rows: number, hits: number): number {
  const idf = Math.log((rows - hits + 0.5) / (hits + 0.5));
  return idf > 0 ? idf : 1e-6;
}

/**
 * FTS5's idf and the rows of each term. fts5vocab counts a stem's rows by walking its posting list, so
 * are kept until the database changes (another connection's commit or a write on this one).
 */
function termStats(s: Statements, terms: readonly QueryTerm[]): { idf: number; rows: number }[] {
  const version = `${(s.version.get() as { data_version: number }).data_version}:${(s.changes.get() as { n: number }).n}`;
  if (version !== s.cachedAt || s.frequencies.size > 50_000) {
    s.frequencies.clear();
    s.cachedAt = version;
  }
  const docFrequency = (stem: string) => {
    let df = s.frequencies.get(stem);
    if (df === undefined) {
      df = (s.docFrequency.get(stem) as { doc: number } | undefined)?.doc ?? 0;
      s.frequencies.set(stem, df);
    }
    return df;
  };
  const { rows } = indexAverages(s);
  return terms.map((t) => {
    // A term the tokenizer splits in two is a phrase: its rarest part bounds its idf and rows.
    const dfs = t.stems.map(docFrequency);
    const df = Math.min(...dfs);
    return { idf: fts5Idf(rows, df), rows: df };
  });
}

/**
 * Adds to each candidate's score the part of the terms left out of MATCH, with bm25()'s own
 * formula (the row's token count from FTS5's docsize record; a term's frequency is its count in
 * the text plus CONTEXT_WEIGHT times its count in the context, as bm25() weighs columns), so a
 * row's score does not depend on which terms FTS5 was asked to match.
 */
function addLeftOutTerms(
  s: Statements,
  candidates: LexicalCandidate[],
  leftOut: readonly { term: QueryTerm; idf: number }[],
): void {
  const { averageLength } = indexAverages(s);
  const rows = s.rowsToCorrect.all(JSON.stringify(candidates.map((c) => c.rowid))) as {
    rowid: number;
    text: string;
    context: string;
    size: Uint8Array | null;
  }[];
  const stems = stemWords(
    rows.flatMap((r) => [r.text, r.context]),
    leftOut.map((l) => l.term),
  );
  const extra = new Map<number, number>();
  rows.forEach((r, i) => {
    const text = stems[2 * i] ?? [];
    const context = stems[2 * i + 1] ?? [];
    const length = r.size
      ? readVarints(r.size, COLUMNS).reduce((a, b) => a + b, 0)
      : text.length + context.length;
    const norm = K1 * (1 - B + (B * length) / (averageLength || 1));
    let add = 0;
    for (const l of leftOut) {
      const tf = termFrequency(text, l.term) + CONTEXT_WEIGHT * termFrequency(context, l.term);
      if (tf > 0) add += (l.idf * tf * (K1 + 1)) / (tf + norm);
    }
    extra.set(r.rowid, add);
  });
  for (const c of candidates) c.bm25 += extra.get(c.rowid) ?? 0;
  candidates.sort((a, b) => b.bm25 - a.bm25 || a.rowid - b.rowid);
}

/**
 * Rows a query lets FTS5 score: bm25() costs about a microsecond per matching row (a row only
 * matched costs twenty times less). At 100k chunks (bench/engine-search.ts, 2 cores, idle) 8,000
 * gave search p95 21.8 ms in process, 5,000 gives 17.7 ms; namespaces under 5,000 matching rows
 * per query are ranked exactly either way.
 */
export const SCORED_ROWS_BUDGET = 5_000;

export interface LexicalOptions {
  /** The similarity a hit needs (see fusion.ts); terms that cannot matter for it are not matched. */
  threshold?: number;
  /** Rows FTS5 may score; SCORED_ROWS_BUDGET by default. */
  budget?: number;
  /**
   * The people the query names (see person.ts): a row said by someone else (its `speaker` set and
   * not among them) has its score multiplied by `factor` before the best rows are kept.
   */
  person?: { names: ReadonlySet<string>; factor: number } | undefined;
}

/**
 * The best `want` rows of `corpus` visible in `scope` for the query's terms, by BM25 over all of
 * them.
 *
 * FTS5 scores every row a MATCH yields, and an OR of common words yields much of the index, so:
 * 1. Terms that cannot lift a row to the threshold are not matched. A row gains at most 2.2 · idf
 *    from a term (k1 + 1, tf → ∞), and a hit's similarity is at most 2.2 · sqrt(score share)
 *    (fusion.ts), so the commonest terms holding less than (threshold / 2.2)² of the query's idf
 *    cannot make a hit alone (in practice: words in most rows, whose idf FTS5 floors at 1e-6).
 * 2. Of the rest, the rarest are matched while their rows (document frequencies) fit the budget
 *    (at least one term; more while too few rows are found). A row holding only terms left out
 *    here can be missed; rows holding any matched term are ranked exactly. This is the one
 *    approximation, and only for queries whose terms hold more rows than the budget.
 * The parts of the terms left out are then added to the fetched rows (addLeftOutTerms), so each
 * returned score is the BM25 that FTS5 gives for the whole query.
 */
export function lexicalSearch(
  db: DatabaseSync,
  corpus: Corpus,
  terms: readonly QueryTerm[],
  scope: Scope,
  want: number,
  opts: LexicalOptions = {},
): LexicalResult {
  if (terms.length === 0 || want <= 0) return { candidates: [], idfSum: 0, termIdf: terms.map(() => 0) };
  const s = prepared(db, corpus);
  const stats = termStats(s, terms);
  const idf = stats.map((t) => t.idf);
  const total = idf.reduce((a, b) => a + b, 0);
  const result = (candidates: LexicalCandidate[]): LexicalResult => ({
    candidates: candidates.slice(0, want),
    idfSum: total,
    termIdf: idf,
  });
  const rarestFirst = terms.map((_, i) => i).sort((a, b) => idf[b]! - idf[a]! || a - b);
  // 1. The commonest terms that together cannot make a hit.
  const needed = ((opts.threshold ?? 0) / MAX_TERM_WEIGHT) ** 2 * total;
  let worth = rarestFirst.length;
  let mass = 0;
  while (worth > 1 && mass + idf[rarestFirst[worth - 1]!]! < needed) mass += idf[rarestFirst[--worth]!]!;
  // 2. The rarest of the others, within the budget.
  const budget = opts.budget ?? SCORED_ROWS_BUDGET;
  let matched = 0;
  let rows = 0;
  while (matched < worth && (matched === 0 || rows + stats[rarestFirst[matched]!]!.rows <= budget)) {
    rows += stats[rarestFirst[matched++]!]!.rows;
  }
  // Rows fetched for the left-out terms' parts to reorder.
  const window = Math.max(4 * want, 60);
  for (;;) {
    const candidates = topVisible(
      db,
      s,
      corpus,
      rarestFirst.slice(0, matched).map((i) => terms[i]!),
      scope,
      window,
    );
    if (candidates.length < want && matched < worth) {
      matched++;
      continue;
    }
    // A term in over half the rows has idf floored at 1e-6: its part is nothing worth reading text for.
    const leftOut = rarestFirst
      .slice(matched)
      .map((i) => ({ term: terms[i]!, idf: idf[i]! }))
      .filter((l) => l.idf > NEGLIGIBLE_IDF);
    if (leftOut.length > 0 && candidates.length > 0) addLeftOutTerms(s, candidates, leftOut);
    if (opts.person && opts.person.names.size > 0 && candidates.length > 0) {
      weighSpeakers(s, candidates, opts.person.names, opts.person.factor);
    }
    return result(candidates);
  }
}

/** Multiplies by `factor` the score of each candidate said by someone not in `names`; re-sorts. */
function weighSpeakers(
  s: Statements,
  candidates: LexicalCandidate[],
  names: ReadonlySet<string>,
  factor: number,
): void {
  const rows = s.speakers.all(JSON.stringify(candidates.map((c) => c.rowid))) as {
    rowid: number;
    speaker: string | null;
  }[];
  const other = new Set(rows.filter((r) => r.speaker !== null && !names.has(r.speaker)).map((r) => r.rowid));
  if (other.size === 0) return;
  for (const c of candidates) if (other.has(c.rowid)) c.bm25 *= factor;
  candidates.sort((a, b) => b.bm25 - a.bm25 || a.rowid - b.rowid);
}

/** The best visible rows for a MATCH of `terms` alone, up to `count`, by their partial BM25. */
function topVisible(
  db: DatabaseSync,
  s: Statements,
  corpus: Corpus,
  terms: readonly QueryTerm[],
  scope: Scope,
  count: number,
): LexicalCandidate[] {
  const match = matchExpression(terms);
  if (!match) return [];
  // FTS5 ranks the whole index (all namespaces share it): fetch the top rows, keep the visible
  // ones, and widen the window while too few are visible and the index had more.
  let window = count;
  for (;;) {
    const rows = s.match.all(match, window) as { rowid: number; rank: number }[];
    const visible = visibleRowids(
      db,
      corpus,
      rows.map((r) => r.rowid),
      scope,
    );
    const out: LexicalCandidate[] = [];
    for (const r of rows) {
      if (visible.has(r.rowid)) out.push({ rowid: r.rowid, bm25: -r.rank });
      if (out.length >= count) break;
    }
    if (out.length >= count || rows.length < window) return out;
    window *= 8;
  }
}
