import { DatabaseSync } from "node:sqlite";

/**
 * Query terms, seen exactly as the FTS5 tables see them. The store's FTS tables use
 * `tokenize='porter unicode61'`; a private in-memory FTS5 table with the same tokenizer turns text
 * into the same stems, so idf look-ups and the reranker never disagree with the index.
 */
export interface QueryTerm {
  /** The word as typed (lowercased); quoted as an FTS5 string in MATCH. */
  text: string;
  /** Its stems as the index holds them (usually one). */
  stems: string[];
}

/** Most terms a query contributes; the rest of a very long query is ignored. */
export const MAX_QUERY_TERMS = 32;

// Function words and question words: they carry no topic, and FTS5's idf clamp already gives words
// in more than half of the rows no weight. Dropped unless the query has nothing else.
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all also am an and any are as at be because been before being " +
    "below between both but by can could did do does doing done down during each else ever few for from " +
    "further get got had has have having he her here hers herself him himself his how i if in into is it " +
    "its itself just let me more most my myself no nor not now of off on once only or other our ours " +
    "ourselves out over own same she should so some such than that the their theirs them themselves then " +
    "there these they this those through to too under until up upon us very was we were what when where " +
    "which while who whom whose why will with would you your yours yourself yourselves s t ll re ve d m"
  ).split(" "),
);

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

let tokenizerDb: DatabaseSync | null = null;
let insertRow: ReturnType<DatabaseSync["prepare"]> | null = null;
let readStems: ReturnType<DatabaseSync["prepare"]> | null = null;
let clearRows: ReturnType<DatabaseSync["prepare"]> | null = null;

function tokenizer() {
  if (!tokenizerDb) {
    tokenizerDb = new DatabaseSync(":memory:");
    tokenizerDb.exec(`
      CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61');
      CREATE VIRTUAL TABLE t_instance USING fts5vocab(t, 'instance');
    `);
    insertRow = tokenizerDb.prepare("INSERT INTO t(rowid, x) VALUES (?, ?)");
    readStems = tokenizerDb.prepare('SELECT doc, term, "offset" AS pos FROM t_instance');
    clearRows = tokenizerDb.prepare("DELETE FROM t");
  }
  return { db: tokenizerDb, insertRow: insertRow!, readStems: readStems!, clearRows: clearRows! };
}

/** Each text's stems in order, by SQLite's own porter unicode61 tokenizer (an FTS5 table in memory). */
function tokenize(texts: readonly string[]): string[][] {
  const t = tokenizer();
  const out: { term: string; pos: number }[][] = texts.map(() => []);
  t.db.exec("BEGIN");
  try {
    for (const [i, text] of texts.entries()) t.insertRow.run(i + 1, text);
    for (const row of t.readStems.all() as { doc: number; term: string; pos: number }[]) {
      out[row.doc - 1]?.push({ term: row.term, pos: row.pos });
    }
    t.clearRows.run();
  } finally {
    t.db.exec("COMMIT");
  }
  return out.map((list) => list.sort((a, b) => a.pos - b.pos).map((x) => x.term));
}

/** Each word's stems (usually one) once tokenized: words repeat, so most are never tokenized again. */
const wordStems = new Map<string, readonly string[]>();
/** Words remembered at most; past it the memory starts again. */
const WORD_STEMS_MAX = 200_000;

/**
 * Tokenizes each text with the index's tokenizer: for text i, its stems in order. Words are cut
 * here (letters, digits and marks) and each distinct word is stemmed by SQLite's porter
 * unicode61 tokenizer once, then remembered: the search index's triggers tokenize every unit and
 * its context, so this is the indexing's hot path.
 */
export function stemTexts(texts: readonly string[]): string[][] {
  const words = texts.map((t) => t.toLowerCase().match(WORD) ?? []);
  const missing = new Set<string>();
  for (const list of words) for (const w of list) if (!wordStems.has(w)) missing.add(w);
  if (missing.size > 0) {
    const list = [...missing];
    if (wordStems.size + list.length > WORD_STEMS_MAX) wordStems.clear();
    const stems = tokenize(list);
    for (let i = 0; i < list.length; i++) wordStems.set(list[i]!, stems[i] ?? []);
  }
  return words.map((list) => list.flatMap((w) => wordStems.get(w) ?? []));
}

/**
 * The distinct informative terms of a free-text query. Punctuation, FTS5 syntax (`AND`, `-`, `*`,
 * quotes, parentheses) and stop words fall away; a query of stop words only keeps them.
 */
export function queryTerms(query: string): QueryTerm[] {
  const words = [...new Set((query.toLowerCase().match(WORD) ?? []).slice(0, 4 * MAX_QUERY_TERMS))];
  const informative = words.filter((w) => !STOP_WORDS.has(w));
  const chosen = (informative.length > 0 ? informative : words).slice(0, MAX_QUERY_TERMS);
  if (chosen.length === 0) return [];
  const stems = stemTexts(chosen);
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  chosen.forEach((text, i) => {
    const s = stems[i] ?? [];
    const key = s.join(" ");
    // "run" and "running" are one term to the index: count it once.
    if (s.length === 0 || seen.has(key)) return;
    seen.add(key);
    terms.push({ text, stems: s });
  });
  return terms;
}

/**
 * An FTS5 MATCH expression that can never be a syntax error: every term is a quoted string (terms
 * hold only letters, digits and marks), joined with OR so partial matches still rank.
 */
export function matchExpression(terms: readonly QueryTerm[]): string | null {
  if (terms.length === 0) return null;
  return terms.map((t) => `"${t.text.replaceAll('"', '""')}"`).join(" OR ");
}

/**
 * Each text as a list of stems, one per word, where only the words that may stem to one of the
 * terms' stems are stemmed (by the index's own tokenizer) and the others stand as "". Porter
 * only rewrites a word's ending, so a word whose first three letters differ from every stem's
 * cannot match; this keeps the tokenizer's work to a few words however long the texts are.
 */
export function stemWords(texts: readonly string[], terms: readonly QueryTerm[]): string[][] {
  // A stem shorter than three letters ("go" of "going") is its own prefix.
  const prefixes = new Set(terms.flatMap((t) => t.stems.map((s) => s.slice(0, 3))));
  const words = texts.map((t) => t.toLowerCase().match(WORD) ?? []);
  const mayMatch = (w: string) => {
    // unicode61 drops diacritics: compare "naïve" with the stem "naiv" without them.
    const bare = /^[a-z0-9]*$/.test(w) ? w : w.normalize("NFD").replace(/\p{M}/gu, "");
    return prefixes.has(bare.slice(0, 3)) || prefixes.has(bare.slice(0, 2)) || prefixes.has(bare.slice(0, 1));
  };
  const distinct = new Set<string>();
  for (const list of words) for (const w of list) distinct.add(w);
  const maybe = [...distinct].filter(mayMatch);
  const stemmed = stemTexts(maybe);
  const stemOf = new Map(maybe.map((w, i) => [w, stemmed[i]?.[0] ?? ""]));
  return words.map((list) => list.map((w) => stemOf.get(w) ?? ""));
}

/** How many times a term (a stem, or a phrase of stems) occurs in a text's stems. */
export function termFrequency(stems: readonly string[], term: QueryTerm): number {
  const k = term.stems.length;
  let n = 0;
  for (let i = 0; i + k <= stems.length; i++) {
    let all = true;
    for (let j = 0; j < k && all; j++) all = stems[i + j] === term.stems[j];
    if (all) n++;
  }
  return n;
}
