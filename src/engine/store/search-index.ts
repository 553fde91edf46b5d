import { createHash } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import { stemTexts } from "../text/terms.js";
import { type Db, type Dialect, Params } from "./connection.js";
import { arrayStatement, statement } from "./statements.js";

/**
 * The search index (migrations 2 and 5): its reads, the indexing of the units written, and the
 * tokenizer its triggers call. One space per
 * namespace and corpus: every statistic a score uses (units, average length, document
 * frequencies) is the namespace's own, and a query reads only its own namespace's postings.
 */

/** What search ranks: document chunks or memories. */
export type Corpus = "chunks" | "memories";

/** A namespace's part of the index for one corpus: BM25's N and total length. */
export interface SearchSpace {
  id: number;
  units: number;
  /** Tokens of every unit, text and context together. */
  length: number;
}

/** One unit's occurrences of one stem. */
export interface Posting {
  unit: number;
  term: string;
  /** In the unit's own text. */
  tf: number;
  /** In the text around it (its context column). */
  tfContext: number;
  /** The unit's length in tokens (text and context). */
  length: number;
}

/**
 * Registers memctx_terms(text, context) on a connection: the JSON {length, terms: {stem: [count
 * in text, count in context]}} that the index triggers store. Stems come from the same tokenizer
 * as query terms (text/terms.ts), so the two never disagree. Every connection that writes chunks
 * or memories needs it (openDatabase registers it before migrating).
 */
export function registerSearchFunctions(db: DatabaseSync): void {
  // A trigger asks for one unit's terms several times in a row (its postings, its frequencies, its
  // length): the last answer is kept, so the unit is tokenized once.
  let last: { text: string; context: string; json: string } | null = null;
  db.function("memctx_terms", { deterministic: true }, (textValue, contextValue) => {
    const text = String(textValue ?? "");
    const context = String(contextValue ?? "");
    if (last && last.text === text && last.context === context) return last.json;
    const [own = [], around = []] = stemTexts([text, context]);
    const terms: Record<string, [number, number]> = {};
    const count = (stem: string, column: 0 | 1) => {
      const tf = terms[stem] ?? [0, 0];
      tf[column]++;
      terms[stem] = tf;
    };
    for (const s of own) count(s, 0);
    for (const s of around) count(s, 1);
    last = { text, context, json: JSON.stringify({ length: own.length + around.length, terms }) };
    return last.json;
  });
}

/**
 * A namespace's space of `corpus`, as committed: a search only reads, and never takes a write lock
 * to index. Every write of the store runs in a transaction, which indexes its units before it
 * commits (store/db.ts); what a write outside one left queued is indexed by the next write
 * transaction's commit, or when the store is opened.
 */
export async function searchSpace(db: Db, namespaceId: string, corpus: Corpus): Promise<SearchSpace | null> {
  const row = await statement<SearchSpace>(
    db,
    "SELECT id, units, length FROM search_spaces WHERE namespace_id = $1 AND corpus = $2",
  ).get(namespaceId, corpus);
  return row ?? null;
}

/** A space of one corpus and its units holding each of a query's stems (0: none). */
export interface SpaceStatistics {
  space: SearchSpace | null;
  holding: Map<string, number>;
}

/** What a search reads first about its namespace: each corpus's statistics, and whether it has memories. */
export interface SearchStatistics {
  /** Whether the namespace holds any memory, indexed or not (hybrid search falls back to chunks without one). */
  hasMemories: boolean;
  /**
   * Whether the namespace holds a document not indexed yet (search/pending.ts reads them only
   * then: a statement less a search, by the partial index of exactly those).
   */
  hasUnindexed: boolean;
  chunks: SpaceStatistics;
  memories: SpaceStatistics;
}

/**
 * Across a wire (PostgreSQL): the rows of `body` (a SELECT over the stem `s.stem`) for each stem of
 * the list parameter `list`, each looked up by its key in a lateral subquery that the planner cannot
 * turn into a scan of the namespace's rows, whatever its statistics say. A new database has none
 * (and a generic plan keeps what it chose then): a join of the list to a space's postings was
 * planned as a scan of the space, 20-600 ms a search on 2,000 memories, where a look-up per stem
 * is a few milliseconds whatever the space holds. OFFSET 0 keeps the subquery from being flattened.
 */
const perStem = (list: string, body: string) =>
  `unnest(CAST(${list} AS text[])) AS s(stem) CROSS JOIN LATERAL (${body} OFFSET 0)`;

/**
 * A namespace's spaces of both corpora, their units holding each stem (anywhere: text or context),
 * whether it holds any memory and any document not indexed yet, in one statement: what every
 * search asks for before it ranks (a round trip each where statements cross a wire). A stem a
 * space never saw counts 0.
 */
export async function searchStatistics(
  db: Db,
  namespaceId: string,
  stems: readonly string[],
): Promise<SearchStatistics> {
  const empty = (): SpaceStatistics => ({ space: null, holding: new Map(stems.map((s) => [s, 0])) });
  const out: SearchStatistics = {
    hasMemories: false,
    hasUnindexed: false,
    chunks: empty(),
    memories: empty(),
  };
  // The one-row h keeps its flags in the answer when the namespace has no space yet.
  const terms = db.dialect.remote
    ? `LEFT JOIN LATERAL (SELECT x.term, x.units FROM ${perStem("$1", "SELECT t.term, t.units FROM search_terms t WHERE t.space = sp.id AND t.term = s.stem")} x) t ON TRUE`
    : `LEFT JOIN (SELECT j.value AS term FROM ${db.dialect.each("$1", "text", "j")}) q ON sp.id IS NOT NULL
       LEFT JOIN search_terms t ON t.space = sp.id AND t.term = q.term`;
  const rows = await statement<
    SearchSpace & {
      has_memories: number;
      has_unindexed: number;
      corpus: Corpus | null;
      term: string | null;
      n: number | null;
    }
  >(
    db,
    `SELECT h.has_memories, h.has_unindexed, sp.corpus, sp.id, sp.units, sp.length, t.term, t.units AS n
     FROM (SELECT CASE WHEN EXISTS (SELECT 1 FROM memories WHERE namespace_id = $2) THEN 1 ELSE 0 END AS has_memories,
       CASE WHEN EXISTS (SELECT 1 FROM documents WHERE namespace_id = $2 AND status NOT IN ('done', 'failed'))
         THEN 1 ELSE 0 END AS has_unindexed) h
     LEFT JOIN search_spaces sp ON sp.namespace_id = $2
     ${terms}`,
  ).all(db.dialect.list([...new Set(stems)]), namespaceId);
  for (const r of rows) {
    out.hasMemories = Number(r.has_memories) === 1;
    out.hasUnindexed = Number(r.has_unindexed) === 1;
    if (r.corpus === null) continue;
    const corpus = out[r.corpus];
    corpus.space ??= { id: r.id, units: r.units, length: r.length };
    if (r.term !== null && r.n !== null) corpus.holding.set(r.term, r.n);
  }
  return out;
}

/** Postings of the stems in units' own text (as Posting objects). */
export async function textPostings(db: Db, space: number, stems: readonly string[]): Promise<Posting[]> {
  if (stems.length === 0) return [];
  return await statement<Posting>(
    db,
    db.dialect.remote
      ? `SELECT p.unit, p.term, p.tf, p.tf_context AS "tfContext", p.length
         FROM ${perStem("$1", "SELECT * FROM search_postings p WHERE p.space = $2 AND p.term = s.stem AND p.tf > 0")} p`
      : `SELECT p.unit, p.term, p.tf, p.tf_context AS "tfContext", p.length
         FROM ${db.dialect.each("$1", "text", "j")} CROSS JOIN search_postings p
         WHERE p.space = $2 AND p.term = j.value AND p.tf > 0`,
  ).all(db.dialect.list([...new Set(stems)]), space);
}

/**
 * A namespace's memory space and how many of its units hold each stem in their own text (0: none,
 * or no space yet), in one statement: what relation detection weighs a fact's words by (and
 * memory-draft.ts reads ahead).
 */
export async function memoryTermCounts(
  db: Db,
  namespaceId: string,
  stems: readonly string[],
): Promise<{ space: SearchSpace | null; textUnits: Map<string, number> }> {
  const listed = [...new Set(stems)];
  // As searchStatistics: across a wire each stem looked up by key; in process a join.
  const terms = db.dialect.remote
    ? `LEFT JOIN LATERAL (SELECT x.term, x.n FROM ${perStem("$2", "SELECT t.term, t.text_units AS n FROM search_terms t WHERE t.space = sp.id AND t.term = s.stem")} x) x ON TRUE`
    : `LEFT JOIN (SELECT j.value AS term FROM ${db.dialect.each("$2", "text", "j")}) q ON TRUE
       LEFT JOIN (SELECT t.space, t.term, t.text_units AS n FROM search_terms t) x ON x.space = sp.id AND x.term = q.term`;
  const rows = await arrayStatement<
    [id: number, units: number, length: number, term: string | null, n: number | null]
  >(
    db,
    `SELECT sp.id, sp.units, sp.length, x.term, x.n FROM search_spaces sp ${terms}
     WHERE sp.namespace_id = $1 AND sp.corpus = 'memories'`,
  ).all(namespaceId, db.dialect.list(listed));
  let space: SearchSpace | null = null;
  const textUnits = new Map<string, number>(listed.map((x) => [x, 0]));
  for (const [id, units, length, term, n] of rows) {
    space ??= { id, units, length };
    if (term !== null && n !== null) textUnits.set(term, n);
  }
  return { space, textUnits };
}

/**
 * One stem's posting as a row of values [unit, stem, tf, tfContext, length]: a query may read
 * thousands, and arrays cost a third of objects to make.
 */
export type PostingRow = [unit: number, term: string, tf: number, tfContext: number, length: number];

/**
 * The shared contexts' postings of the stems in `terms` (a table whose column `term` is `on`), as
 * their units' postings (the stems a unit also holds in its own text are in its own posting, with
 * their context count: left out here, so each unit and stem is one row). Over the aliases `c`
 * (the context's posting) and `u` (the unit); `space` the space's parameter.
 */
const sharedContextHits = (terms: string, on: string, space: string) => `
  FROM ${terms} CROSS JOIN search_context_postings c CROSS JOIN search_units u
  WHERE c.space = ${space} AND c.term = ${on} AND u.context = c.context
    AND NOT EXISTS (SELECT 1 FROM search_postings p WHERE p.space = c.space AND p.term = c.term AND p.unit = u.unit)`;

/**
 * Every posting of the stems in the space, one row per unit and stem. Its cost is the stems'
 * document frequencies in this namespace, whatever the rest of the database holds.
 */
export async function postingRows(db: Db, space: number, stems: readonly string[]): Promise<PostingRow[]> {
  if (stems.length === 0) return [];
  return await arrayStatement<PostingRow>(
    db,
    `SELECT p.unit, p.term, p.tf, p.tf_context, p.length
     FROM ${db.dialect.each("$1", "text", "j")} CROSS JOIN search_postings p WHERE p.space = $2 AND p.term = j.value
     UNION ALL
     SELECT u.unit, c.term, 0, c.tf, u.length
     ${sharedContextHits(db.dialect.each("$1", "text", "j"), "j.value", "$2")}`,
  ).all(db.dialect.list([...new Set(stems)]), space);
}

/** BM25's constants. */
export interface Bm25Constants {
  k1: number;
  b: number;
  /** The weight of a unit's context column against its own text (1). */
  contextWeight: number;
}

/** BM25's constants and the space's average unit length, for a score summed by the database. */
export interface Bm25Weights extends Bm25Constants {
  averageLength: number;
}

/** A unit, its partial BM25 score and its length. */
export type ScoredUnit = [unit: number, bm25: number, length: number];

/**
 * Arithmetic that BM25 is written in (bm25Part): on numbers, where search sums postings itself,
 * and on SQL expressions, where the database sums them (topUnits). One formula, two evaluations:
 * the scores of both ways are the same sums of the same terms in the same order.
 */
export interface Arithmetic<T> {
  constant(x: number): T;
  add(a: T, b: T): T;
  mul(a: T, b: T): T;
  div(a: T, b: T): T;
  /** `value` where `x` > 0, else 0. */
  whenPositive(x: T, value: T): T;
}

export const NUMBERS: Arithmetic<number> = {
  constant: (x) => x,
  add: (a, b) => a + b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  whenPositive: (x, value) => (x > 0 ? value : 0),
};

const SQL: Arithmetic<string> = {
  // A constant as a double on both backends (PostgreSQL reads 0.3 as an exact numeric).
  constant: (x) => `CAST(${x} AS DOUBLE PRECISION)`,
  add: (a, b) => `(${a} + ${b})`,
  mul: (a, b) => `(${a} * ${b})`,
  div: (a, b) => `(${a} / ${b})`,
  whenPositive: (x, value) => `CASE WHEN ${x} > 0 THEN ${value} ELSE 0 END`,
};

/**
 * BM25's part of one term in a unit: its idf over the unit's term frequency in its own text
 * (`tf`, weight 1) and in its context (`tfContext`, weight contextWeight), saturated by k1 and
 * normalized by the unit's length against the average (b).
 */
export function bm25Part<T>(
  n: Arithmetic<T>,
  w: Bm25Constants,
  averageLength: T,
  idf: T,
  tf: T,
  tfContext: T,
  length: T,
): T {
  const freq = n.add(tf, n.mul(n.constant(w.contextWeight), tfContext));
  const norm = n.mul(
    n.constant(w.k1),
    n.add(n.constant(1 - w.b), n.div(n.mul(n.constant(w.b), length), averageLength)),
  );
  return n.whenPositive(freq, n.div(n.mul(n.mul(idf, freq), n.constant(w.k1 + 1)), n.add(freq, norm)));
}

/** A query term as topUnits scores it: its stems (several: a phrase, all in one unit) and its idf. */
export interface WeightedTerm {
  stems: readonly string[];
  idf: number;
}

/**
 * The units of the space with the highest BM25 over `terms`, best first, `limit` of them after
 * the first `offset`: what search/lexical.ts sums from postingRows (a phrase counts where all its
 * stems are, as often as its rarest), summed by the database, so that only the best rows cross
 * into JavaScript (and, on PostgreSQL, the wire) however many postings the terms hold. A WITH
 * clause whose last table, `page (unit, bm25, length)`, is that page, for a statement to read (with
 * the units' visibility: search-scope.ts topUnits), its values added to `p`. The terms are
 * materialized lists joined to the postings' index (as postingRows' json_each is): inlined,
 * PostgreSQL estimated 100 terms and scanned the space's postings whole (450 ms a search at 100k).
 */
export function topUnitsPage(
  p: Params,
  space: number,
  terms: readonly WeightedTerm[],
  weights: Bm25Weights,
  limit: number,
  offset: number,
): string {
  const single = terms.filter((t) => t.stems.length === 1);
  const phrases = terms.filter((t) => t.stems.length > 1);
  // Each list's rows as arrays read by index (`j.value ->> K`); the space's average length a
  // parameter, so that every space shares one statement text.
  const q = p.add(JSON.stringify(single.map((t) => [t.stems[0], t.idf])));
  const sp = p.add(space);
  const averageLength = `CAST(${p.add(weights.averageLength)} AS DOUBLE PRECISION)`;
  const ph = p.add(JSON.stringify(phrases.flatMap((t, i) => t.stems.map((stem) => [i, stem]))));
  const pw = p.add(JSON.stringify(phrases.map((t, i) => [i, t.idf, t.stems.length])));
  const stems = p.add(p.dialect.list([...new Set(terms.flatMap((t) => t.stems))]));
  const d = p.dialect;
  return `WITH q (term, idf) AS MATERIALIZED (
       SELECT j.value ->> 0, CAST(j.value ->> 1 AS DOUBLE PRECISION) FROM ${d.rows(q, "j")}
     ),
     ph (phrase, term) AS MATERIALIZED (
       SELECT CAST(j.value ->> 0 AS INTEGER), j.value ->> 1 FROM ${d.rows(ph, "j")}
     ),
     pw (phrase, idf, stems) AS MATERIALIZED (
       SELECT CAST(j.value ->> 0 AS INTEGER), CAST(j.value ->> 1 AS DOUBLE PRECISION), CAST(j.value ->> 2 AS INTEGER)
       FROM ${d.rows(pw, "j")}
     ),
     ${d.remote ? hitsAcrossWire(stems, sp) : `hits (unit, term, tf, tf_context, length) AS MATERIALIZED (${hitsInProcess(d, stems, sp)})`},
     found (unit, tf, tf_context, length, idf) AS (
       SELECT h.unit, min(h.tf), min(h.tf_context), max(h.length), pw.idf
       FROM hits h JOIN ph ON ph.term = h.term JOIN pw ON pw.phrase = ph.phrase
       GROUP BY h.unit, ph.phrase, pw.idf, pw.stems HAVING count(*) = pw.stems
     ),
     page (unit, bm25, length) AS MATERIALIZED (
       SELECT unit, sum(part) AS bm25, max(length) AS length FROM (
         SELECT h.unit AS unit, ${bm25Part(SQL, weights, averageLength, "q.idf", "h.tf", "h.tf_context", "h.length")} AS part, h.length AS length
         FROM hits h JOIN q ON q.term = h.term
         UNION ALL
         SELECT f.unit, ${bm25Part(SQL, weights, averageLength, "f.idf", "f.tf", "f.tf_context", "f.length")}, f.length FROM found f
       ) x GROUP BY unit ORDER BY bm25 DESC, unit LIMIT ${p.add(limit)} OFFSET ${p.add(offset)}
     )`;
}

/**
 * topUnitsPage's hits across a wire (PostgreSQL): every posting of the stems (the list parameter
 * `stems`) in the space `sp`, one row per unit and stem (postingRows' rows), as two WITH tables,
 * `own` and `hits`. Each a look-up per stem and per context (perStem), whatever the planner's
 * statistics. A unit holding a stem in its own text and in its shared context has its own posting
 * alone (which carries its context's count, indexUnits): the shared rows of the units and stems
 * found in `own` are left out by one hash of it, not by a probe per shared row (as postingRows'
 * NOT EXISTS does in process) nor by grouping every row by unit and stem (0.3-0.5 ms of a 4-5 ms
 * statement at 1,500 memories, the same pages).
 */
const hitsAcrossWire = (
  stems: string,
  sp: string,
) => `own (unit, term, tf, tf_context, length) AS MATERIALIZED (
    SELECT p.unit, p.term, p.tf, p.tf_context, p.length
    FROM ${perStem(stems, `SELECT p.unit, p.term, p.tf, p.tf_context, p.length FROM search_postings p WHERE p.space = ${sp} AND p.term = s.stem`)} p
  ),
  hits (unit, term, tf, tf_context, length) AS MATERIALIZED (
    SELECT * FROM own
    UNION ALL
    SELECT u.unit, c.term, 0, c.tf, u.length
    FROM ${perStem(stems, `SELECT c.context, c.term, c.tf FROM search_context_postings c WHERE c.space = ${sp} AND c.term = s.stem`)} c
    CROSS JOIN LATERAL (SELECT u.unit, u.length FROM search_units u WHERE u.context = c.context OFFSET 0) u
    WHERE NOT EXISTS (SELECT 1 FROM own o WHERE o.unit = u.unit AND o.term = c.term)
  )`;

/** topUnitsPage's hits in process (SQLite): postingRows' statement. */
const hitsInProcess = (d: Dialect, stems: string, sp: string) => `
  SELECT p.unit, p.term, p.tf, p.tf_context, p.length
  FROM ${d.each(stems, "text", "j")} CROSS JOIN search_postings p WHERE p.space = ${sp} AND p.term = j.value
  UNION ALL
  SELECT u.unit, c.term, 0, c.tf, u.length
  ${sharedContextHits(d.each(stems, "text", "j"), "j.value", sp)}`;

/** The postings of `stems` in the given units only (point look-ups: a few per candidate). */
export async function postingsIn(
  db: Db,
  space: number,
  units: readonly number[],
  stems: readonly string[],
): Promise<Posting[]> {
  if (units.length === 0 || stems.length === 0) return [];
  const args = [
    db.dialect.list([...new Set(stems)]),
    // In key order, so that each stem's look-ups walk its postings forwards.
    db.dialect.list([...units].sort((a, b) => a - b)),
    space,
  ];
  if (db.dialect.remote) {
    const rows = await statement<Posting & { shared: number }>(db, POSTINGS_IN_ACROSS_WIRE).all(...args);
    const own = new Set(rows.filter((r) => r.shared === 0).map((r) => `${r.unit} ${r.term}`));
    return rows
      .filter((r) => r.shared === 0 || !own.has(`${r.unit} ${r.term}`))
      .map(({ unit, term, tf, tfContext, length }) => ({ unit, term, tf, tfContext, length }));
  }
  // In process (SQLite) a point look-up per stem and unit, in the table's key order.
  const d = db.dialect;
  return await statement<Posting>(
    db,
    `SELECT p.unit, p.term, p.tf, p.tf_context AS "tfContext", p.length
     FROM ${d.each("$1", "text", "s")} CROSS JOIN ${d.each("$2", "bigint", "x")} CROSS JOIN search_postings p
     WHERE p.space = $3 AND p.term = s.value AND p.unit = x.value
     UNION ALL
     SELECT u.unit, c.term, 0, c.tf, u.length
     FROM ${d.each("$2", "bigint", "x")} CROSS JOIN search_units u
       CROSS JOIN ${d.each("$1", "text", "s")} CROSS JOIN search_context_postings c
     WHERE u.space = $3 AND u.unit = x.value AND u.context IS NOT NULL
       AND c.space = $3 AND c.term = s.value AND c.context = u.context
       AND NOT EXISTS (SELECT 1 FROM search_postings p WHERE p.space = $3 AND p.term = c.term AND p.unit = u.unit)`,
  ).all(...args);
}

/**
 * postingsIn across a wire (PostgreSQL; $1 the stems, $2 the units, $3 the space): a look-up per
 * stem and unit in the postings' key, and per stem and shared context in the context postings'
 * (see perStem: the same statement had PostgreSQL, without statistics, probe every posting of the
 * space for each shared one, 200 ms); a unit's own posting of a stem wins over its context's,
 * which postingsIn decides. Was: each unit's and context's postings filtered by the stems, which
 * read a context's hundred terms for the one or two asked (1.7 against 1.3 ms mean, 1.6 against
 * 1.0 ms median, for the left-out terms of 63 of 212 searches at 1,500 memories).
 */
const POSTINGS_IN_ACROSS_WIRE = `
  SELECT p.unit, p.term, p.tf, p.tf_context AS "tfContext", p.length, 0 AS shared
  FROM unnest(CAST($1 AS text[])) AS s(stem) CROSS JOIN unnest(CAST($2 AS bigint[])) AS x(unit)
  CROSS JOIN LATERAL (SELECT * FROM search_postings p
    WHERE p.space = $3 AND p.term = s.stem AND p.unit = x.unit OFFSET 0) p
  UNION ALL
  SELECT u.unit, c.term, 0, c.tf, u.length, 1
  FROM unnest(CAST($2 AS bigint[])) AS x(unit)
  CROSS JOIN LATERAL (SELECT u.unit, u.length, u.context FROM search_units u
    WHERE u.space = $3 AND u.unit = x.unit AND u.context IS NOT NULL OFFSET 0) u
  CROSS JOIN unnest(CAST($1 AS text[])) AS s(stem)
  CROSS JOIN LATERAL (SELECT c.term, c.tf FROM search_context_postings c
    WHERE c.space = $3 AND c.term = s.stem AND c.context = u.context OFFSET 0) c`;

/**
 * Inside a transaction, locks a namespace's space of `corpus` (if it has one yet) until the end: a
 * writer that will index units of it takes this first, before it writes them (their triggers
 * update the space's statistics), so writers of one space take turns and never hold its rows in
 * different orders. PostgreSQL only: a SQLite transaction excludes every other writer.
 */
export async function lockSearchSpace(db: Db, namespaceId: string, corpus: Corpus): Promise<void> {
  if (!db.dialect.forUpdate || !db.isTransaction) return;
  // Made here if it is not yet, as its units' triggers would make it: the first writers of a
  // namespace take turns too (the second waits for the first's insert). An update that changes
  // nothing locks the row in the same round trip (a heap-only tuple: no index written).
  await statement(
    db,
    `INSERT INTO search_spaces (namespace_id, corpus) VALUES ($1, $2)
     ON CONFLICT (namespace_id, corpus) DO UPDATE SET units = search_spaces.units`,
  ).run(namespaceId, corpus);
}

/**
 * Indexes what is queued (of `space`, or all) in a write transaction of its own, when anything is
 * and no transaction is open: for units written outside a transaction (and left by a migration),
 * which no commit has indexed. Says whether it indexed anything. (Its own BEGIN, not store/db.ts's
 * `transaction`, which calls indexPending and so would import this file back.)
 */
export async function indexQueued(db: Db, space?: number): Promise<boolean> {
  if (db.isTransaction) return false;
  const queued = statement(
    db,
    "SELECT 1 FROM search_pending WHERE CAST($1 AS bigint) IS NULL OR space = $1 LIMIT 1",
  );
  if (!(await queued.get(space ?? null))) return false;
  // Its own transaction, not store/db.ts's `transaction` (which calls indexPending and so would
  // import this file back).
  await db.transact("write", () => indexPending(db, space));
  return true;
}

/** Units indexed per pass of indexPending (a bound on the memory one pass holds). */
const INDEX_PASS_UNITS = 2_000;

/**
 * Indexes the units queued in search_pending (of `space`, of `namespaceIds`' spaces, or all), inside the caller's write
 * transaction: store/db.ts `transaction` calls it before every commit, so what a transaction
 * writes is searchable when it commits. A pass takes many units at once: a context several of
 * them share is tokenized and posted once, and each stem's frequencies get one upsert, whatever
 * the number of units holding it.
 */
export async function indexPending(db: Db, space?: number, namespaceIds?: readonly string[]): Promise<void> {
  // On PostgreSQL writers of one namespace's documents commit side by side (store/db.ts
  // documentTransaction): the spaces with units to index are locked first, in one order, so that
  // their statistics (terms, units, length) take one writer at a time, and only their units are read.
  const d = db.dialect;
  for (;;) {
    const p = new Params(d);
    const where = [
      space === undefined ? null : `p.space = ${p.add(space)}`,
      namespaceIds ? p.isIn("s.namespace_id", namespaceIds, "text") : null,
    ].filter((c) => c !== null);
    // The spaces of the pass are locked as its rows come, in the order of their ids (forUpdate);
    // each unit's row is read with it, as it is now (a key look-up each, whatever the statistics).
    const row = (column: "rowid" | "text" | "context") =>
      `CASE s.corpus WHEN 'chunks' THEN (SELECT c.${column} FROM chunks c WHERE c.rowid = p.unit)
         ELSE (SELECT m.${column === "text" ? "memory" : column} FROM memories m WHERE m.rowid = p.unit) END`;
    const pending = await statement<PendingUnit & { space: number; corpus: Corpus }>(
      db,
      `SELECT p.space, p.unit, s.corpus, ${row("rowid")} AS found, ${row("text")} AS text, ${row("context")} AS context
       FROM search_pending p JOIN search_spaces s ON s.id = p.space
       WHERE ${where.length ? where.join(" AND ") : "TRUE"}
       ORDER BY p.space, p.unit LIMIT ${INDEX_PASS_UNITS}${namespaceIds && d.forUpdate ? `${d.forUpdate} OF s` : ""}`,
    ).all(...p.values);
    if (pending.length === 0) return;
    const bySpace = new Map<number, PendingUnit[]>();
    for (const p of pending) {
      const units = bySpace.get(p.space);
      if (units) units.push(p);
      else bySpace.set(p.space, [p]);
    }
    for (const [id, units] of bySpace) await indexUnits(db, id, units);
    // A pass short of full read every unit queued (indexing queues none): no need to ask again.
    if (pending.length < INDEX_PASS_UNITS) return;
  }
}

/** A unit queued in search_pending, with its row as the pass read it (found null: deleted since). */
interface PendingUnit {
  unit: number;
  found: number | null;
  text: string | null;
  context: string | null;
}

/** A context of one pass: its stems and length, and the shared context it is posted as (if any). */
interface PassContext {
  stems: Map<string, number>;
  length: number;
  units: number;
  shared: number | null;
}

/**
 * Adds units of one space to the index (their rows as indexPending read them; a unit since deleted
 * is skipped) and takes them off the space's queue (search_pending).
 */
async function indexUnits(db: Db, space: number, pending: readonly PendingUnit[]): Promise<void> {
  const dequeue = (units: string) =>
    `DELETE FROM search_pending WHERE space = $1 AND ${db.dialect.isIn("unit", units, "bigint")}`;
  const units = pending.map((p) => p.unit);
  const rows = pending.filter((p) => p.found !== null);
  if (rows.length === 0) {
    await statement(db, dequeue("$2")).run(space, db.dialect.list(units));
    return;
  }
  const texts = stemTexts(rows.map((r) => r.text ?? ""));
  const hashes = rows.map((r) =>
    createHash("sha1")
      .update(r.context ?? "")
      .digest("base64url"),
  );
  const contexts = new Map<string, PassContext>();
  rows.forEach((row, i) => {
    const context = contexts.get(hashes[i]!);
    if (context) context.units++;
    else {
      const stems = stemTexts([row.context ?? ""])[0] ?? [];
      contexts.set(hashes[i]!, { stems: counts(stems), length: stems.length, units: 1, shared: null });
    }
  });
  // A context two units of the pass hold, or one already shared, is shared: posted once.
  // The pass's contexts already shared, in one statement (a round trip each was most of a
  // conversation document's indexing statements on PostgreSQL).
  const hashed = [...contexts].filter(([, c]) => c.length > 0).map(([hash]) => hash);
  const sharedIds = new Map(
    hashed.length === 0
      ? []
      : (
          await statement<{ hash: string; id: number }>(
            db,
            `SELECT hash, id FROM search_contexts WHERE space = $1 AND ${db.dialect.isIn("hash", "$2", "text")}`,
          ).all(space, db.dialect.list(hashed))
        ).map((r) => [r.hash, r.id]),
  );
  const newShared = statement<{ id: number }>(
    db,
    "INSERT INTO search_contexts (space, hash, members, length) VALUES ($1, $2, 0, $3) RETURNING id",
  );
  const contextRows: [string, number, number][] = [];
  const members: [number, number][] = [];
  for (const [hash, c] of contexts) {
    if (c.length === 0) continue;
    const known = sharedIds.get(hash);
    if (known === undefined && c.units < 2) continue;
    c.shared = known ?? (await newShared.get(space, hash, c.length))!.id;
    if (known === undefined) for (const [stem, tf] of c.stems) contextRows.push([stem, c.shared, tf]);
    members.push([c.shared, c.units]);
  }
  const frequencies = new Map<string, [units: number, textUnits: number]>();
  const unitRows: [number, number, number | null][] = [];
  const postingRows: [string, number, number, number, number][] = [];
  let length = 0;
  rows.forEach((row, i) => {
    const own = counts(texts[i] ?? []);
    const context = contexts.get(hashes[i]!)!;
    const unitLength = (texts[i]?.length ?? 0) + context.length;
    length += unitLength;
    unitRows.push([row.unit, unitLength, context.shared]);
    // Its own stems, with their context counts; the rest of its context too unless shared.
    const posted = context.shared === null ? new Set([...own.keys(), ...context.stems.keys()]) : own.keys();
    for (const stem of posted) {
      postingRows.push([stem, row.unit, own.get(stem) ?? 0, context.stems.get(stem) ?? 0, unitLength]);
    }
    for (const stem of new Set([...own.keys(), ...context.stems.keys()])) {
      const f = frequencies.get(stem) ?? [0, 0];
      f[0]++;
      if (own.has(stem)) f[1]++;
      frequencies.set(stem, f);
    }
  });
  // One statement per table: the rows of the pass as one JSON parameter each.
  const writes: { sql: (rows: string, space: string) => string; rows: unknown[] }[] = [
    {
      sql: (rows, space) => `INSERT INTO search_units (space, unit, length, context)
        SELECT ${space}, ${int("j.value ->> 0")}, ${int("j.value ->> 1")}, ${int("j.value ->> 2")}
        FROM ${db.dialect.rows(rows, "j")}`,
      rows: unitRows,
    },
    {
      sql: (rows, space) => `INSERT INTO search_postings (space, term, unit, tf, tf_context, length)
        SELECT ${space}, j.value ->> 0, ${int("j.value ->> 1")}, ${int("j.value ->> 2")}, ${int("j.value ->> 3")},
          ${int("j.value ->> 4")}
        FROM ${db.dialect.rows(rows, "j")}`,
      rows: postingRows,
    },
    {
      sql: (rows, space) => `INSERT INTO search_context_postings (space, term, context, tf)
        SELECT ${space}, j.value ->> 0, ${int("j.value ->> 1")}, ${int("j.value ->> 2")} FROM ${db.dialect.rows(rows, "j")}`,
      rows: contextRows,
    },
    {
      sql: (rows, space) => `UPDATE search_contexts SET members = members + ${int("j.value ->> 1")}
        FROM ${db.dialect.rows(rows, "j")} WHERE search_contexts.id = ${int("j.value ->> 0")} AND search_contexts.space = ${space}`,
      rows: members,
    },
    {
      sql: (rows, space) => `INSERT INTO search_terms (space, term, units, text_units)
        SELECT ${space}, j.value ->> 0, ${int("j.value ->> 1")}, ${int("j.value ->> 2")} FROM ${db.dialect.rows(rows, "j")}
        WHERE true
        ON CONFLICT (space, term) DO UPDATE SET units = search_terms.units + excluded.units,
          text_units = search_terms.text_units + excluded.text_units`,
      rows: [...frequencies].map(([stem, [n, t]]) => [stem, n, t]),
    },
  ];
  const spaceTotals = "UPDATE search_spaces SET units = units + $2, length = length + $3 WHERE id = $1";
  if (db.dialect.remote) {
    // A database server: the pass's writes and the dequeue in one statement (data-modifying CTEs),
    // one round trip instead of seven inside the index's lock.
    const n = writes.length;
    await statement(
      db,
      `WITH ${writes.map((w, i) => `w${i} AS (${w.sql(`$${i + 4}`, "$1")})`).join(",\n")},
         dequeued AS (${dequeue(`$${n + 4}`)})
       ${spaceTotals}`,
    ).run(space, rows.length, length, ...writes.map((w) => JSON.stringify(w.rows)), db.dialect.list(units));
    return;
  }
  for (const w of writes) {
    if (w.rows.length > 0) await statement(db, w.sql("$1", "$2")).run(JSON.stringify(w.rows), space);
  }
  await statement(db, spaceTotals).run(space, rows.length, length);
  await statement(db, dequeue("$2")).run(space, db.dialect.list(units));
}

/**
 * An integer read from JSON: SQLite's `->>` gives it as an integer already, PostgreSQL's as text,
 * which an INSERT into an integer column refuses. CAST is one text for both (and costs SQLite
 * nothing measurable).
 */
const int = (expr: string) => `CAST(${expr} AS BIGINT)`;

/** Each stem's count in a list of stems. */
function counts(stems: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of stems) out.set(s, (out.get(s) ?? 0) + 1);
  return out;
}

/**
 * The first `count` of the namespace's speakers (chunks' speakers, lowercased) in each range
 * [from, end), in order: for each range's `from`, its names. One statement for all of a query's
 * words; each name one index seek (chunks_namespace_speaker) from the last, however large the
 * namespace and however many turns each speaker has (a recursive walk: DISTINCT would read them all).
 */
export async function speakersIn(
  db: Db,
  namespaceId: string,
  ranges: readonly (readonly [from: string, end: string])[],
  count: number,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(ranges.map(([from]) => [from, []]));
  if (ranges.length === 0 || count <= 0) return out;
  // The next name strictly after the last (PostgreSQL's text cannot hold the "\u0000" that an
  // inclusive bound would need).
  const rows = await statement<{ start: string; name: string }>(
    db,
    `WITH RECURSIVE walk (start, name, n, upto) AS (
       SELECT j.value ->> 0, (SELECT speaker FROM chunks WHERE namespace_id = $2 AND speaker IS NOT NULL
         AND speaker >= j.value ->> 0 AND speaker < j.value ->> 1 ORDER BY speaker LIMIT 1), 1, j.value ->> 1
       FROM ${db.dialect.rows("$1", "j")}
       UNION ALL
       SELECT w.start, (SELECT speaker FROM chunks WHERE namespace_id = $2 AND speaker IS NOT NULL
         AND speaker > w.name AND speaker < w.upto ORDER BY speaker LIMIT 1), w.n + 1, w.upto
       FROM walk w WHERE w.name IS NOT NULL AND w.n < $3
     )
     SELECT start, name FROM walk WHERE name IS NOT NULL ORDER BY start, n`,
  ).all(JSON.stringify(ranges), namespaceId, count);
  for (const r of rows) out.get(r.start)?.push(r.name);
  return out;
}

/**
 * What a caller of memoriesHolding read ahead (memory-draft.ts): the space, the stems' postings and
 * the rows of a window of units (those passing its `where`, in the window's order) when it has them.
 */
export interface ReadAheadHolding<Row> {
  space: SearchSpace | null;
  postings(stems: readonly string[]): Posting[] | undefined;
  rows(window: readonly number[]): Row[] | undefined;
}

/**
 * Memories of the namespace holding any of the stems in their own text, those holding the most
 * (rarer stems counting more) first, that pass `where` (conditions over the alias `m`), at most
 * `limit`. Reads only the namespace's postings of those stems.
 */
export async function memoriesHolding<Row = { id: string; memory: string }>(
  db: Db,
  namespaceId: string,
  stems: readonly string[],
  where: (p: Params) => string,
  limit: number,
  columns = "m.id, m.memory",
  ahead?: ReadAheadHolding<Row>,
): Promise<Row[]> {
  const space = ahead ? ahead.space : await searchSpace(db, namespaceId, "memories");
  if (!space || stems.length === 0) return [];
  const ranked = rankedUnits(ahead?.postings(stems) ?? (await textPostings(db, space.id, stems)));
  const out: Row[] = [];
  // Visible ones in rank order, a window at a time.
  for (let from = 0; from < ranked.length && out.length < limit; from += limit) {
    const window = ranked.slice(from, from + limit);
    const known = ahead?.rows(window);
    if (known) {
      out.push(...known.slice(0, limit - out.length));
      continue;
    }
    const p = new Params(db.dialect);
    const rows = db.dialect.remote
      ? // Looked up by key (= ANY): a join of the list to a new table's rows was planned as a scan.
        await statement<Row & { holding_unit: number }>(
          db,
          `SELECT m.rowid AS holding_unit, ${columns} FROM memories m
           WHERE ${p.isIn("m.rowid", window, "bigint")} AND ${where(p)}`,
        ).all(...p.values)
      : await statement<Row & { holding_unit: number }>(
          db,
          `SELECT m.rowid AS holding_unit, ${columns} FROM ${p.each(window, "bigint", "j")} CROSS JOIN memories m
           WHERE m.rowid = j.value AND ${where(p)} ORDER BY j.key`,
        ).all(...p.values);
    const rank = new Map(window.map((u, i) => [u, i]));
    rows.sort((a, b) => rank.get(Number(a.holding_unit))! - rank.get(Number(b.holding_unit))!);
    for (const r of rows.slice(0, limit - out.length)) {
      const { holding_unit: _, ...row } = r;
      out.push(row as Row);
    }
  }
  return out;
}

/** The units of some stems' postings, those holding the most (rarer stems counting more) first. */
export function rankedUnits(postings: readonly Posting[]): number[] {
  const units = new Map<string, number>();
  for (const p of postings) units.set(p.term, (units.get(p.term) ?? 0) + 1);
  const score = new Map<number, number>();
  for (const p of postings) score.set(p.unit, (score.get(p.unit) ?? 0) + 1 / (units.get(p.term) ?? 1));
  return [...score].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([unit]) => unit);
}
