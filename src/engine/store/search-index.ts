import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { stemTexts } from "../text/terms.js";
import { statement } from "./statements.js";

/**
 * The search index of migration 2, read side, and the tokenizer its triggers call. One space per
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

export function searchSpace(db: DatabaseSync, namespaceId: string, corpus: Corpus): SearchSpace | null {
  const row = statement(
    db,
    "SELECT id, units, length FROM search_spaces WHERE namespace_id = ? AND corpus = ?",
  ).get(namespaceId, corpus) as SearchSpace | undefined;
  return row ?? null;
}

/**
 * Units of the space holding each stem: anywhere (text or context), or with `textOnly` in their
 * own text. A stem the space never saw counts 0.
 */
export function unitsHolding(
  db: DatabaseSync,
  space: number,
  stems: readonly string[],
  textOnly = false,
): Map<string, number> {
  const out = new Map<string, number>(stems.map((s) => [s, 0]));
  if (stems.length === 0) return out;
  const rows = statement(
    db,
    `SELECT t.term, ${textOnly ? "t.text_units" : "t.units"} AS n
     FROM json_each(?) j CROSS JOIN search_terms t ON t.space = ? AND t.term = j.value`,
  ).all(JSON.stringify([...new Set(stems)]), space) as { term: string; n: number }[];
  for (const r of rows) out.set(r.term, r.n);
  return out;
}

/**
 * Every posting of the stems in the space (with `textOnly`, those in units' own text). Its cost is
 * the stems' document frequencies in this namespace, whatever the rest of the database holds.
 */
export function postingsOf(
  db: DatabaseSync,
  space: number,
  stems: readonly string[],
  textOnly = false,
): Posting[] {
  if (stems.length === 0) return [];
  return statement(
    db,
    `SELECT p.unit, p.term, p.tf, p.tf_context AS tfContext, p.length
     FROM json_each(?) j CROSS JOIN search_postings p ON p.space = ? AND p.term = j.value
     ${textOnly ? "WHERE p.tf > 0" : ""}`,
  ).all(JSON.stringify([...new Set(stems)]), space) as unknown as Posting[];
}

/**
 * One stem's posting as a row of values [unit, stem, tf, tfContext, length]: a query may read
 * thousands, and arrays cost a third of objects to make.
 */
export type PostingRow = [unit: number, term: string, tf: number, tfContext: number, length: number];

/** postingsOf's postings as rows of values, for scoring many at once. */
export function postingRows(db: DatabaseSync, space: number, stems: readonly string[]): PostingRow[] {
  if (stems.length === 0) return [];
  const st = statement(
    db,
    `SELECT p.unit, p.term, p.tf, p.tf_context, p.length
     FROM json_each(?) j CROSS JOIN search_postings p ON p.space = ? AND p.term = j.value`,
  );
  st.setReturnArrays(true);
  return st.all(JSON.stringify([...new Set(stems)]), space) as unknown as PostingRow[];
}

/** The postings of `stems` in the given units only (point look-ups: a few per candidate). */
export function postingsIn(
  db: DatabaseSync,
  space: number,
  units: readonly number[],
  stems: readonly string[],
): Posting[] {
  if (units.length === 0 || stems.length === 0) return [];
  return statement(
    db,
    `SELECT p.unit, p.term, p.tf, p.tf_context AS tfContext, p.length
     FROM json_each(?) s CROSS JOIN json_each(?) u
     CROSS JOIN search_postings p ON p.space = ? AND p.term = s.value AND p.unit = u.value`,
  ).all(
    JSON.stringify([...new Set(stems)]),
    // In key order, so that each stem's look-ups walk its postings forwards.
    JSON.stringify([...units].sort((a, b) => a - b)),
    space,
  ) as unknown as Posting[];
}

const TABLE: Record<Corpus, string> = { chunks: "chunks", memories: "memories" };

/** Who said each unit (a conversation turn's role, lowercased); units said by nobody are left out. */
export function unitSpeakers(
  db: DatabaseSync,
  corpus: Corpus,
  units: readonly number[],
): Map<number, string> {
  if (units.length === 0) return new Map();
  const rows = statement(
    db,
    `SELECT t.rowid AS unit, t.speaker FROM json_each(?) j CROSS JOIN ${TABLE[corpus]} t ON t.rowid = j.value
     WHERE t.speaker IS NOT NULL`,
  ).all(JSON.stringify(units)) as { unit: number; speaker: string }[];
  return new Map(rows.map((r) => [r.unit, r.speaker]));
}

/**
 * The first of the namespace's speakers (chunks' speakers, lowercased) in [`from`, `end`), in
 * order: one index seek (chunks_namespace_speaker), however large the namespace.
 */
export function nextSpeaker(
  db: DatabaseSync,
  namespaceId: string,
  from: string,
  end: string,
): string | undefined {
  const row = statement(
    db,
    `SELECT speaker AS name FROM chunks WHERE namespace_id = ? AND speaker IS NOT NULL
       AND speaker >= ? AND speaker < ? ORDER BY speaker LIMIT 1`,
  ).get(namespaceId, from, end) as { name: string } | undefined;
  return row?.name;
}

/**
 * Memories of the namespace holding any of the stems in their own text, those holding the most
 * (rarer stems counting more) first, that pass `where` (conditions over the alias `m`), at most
 * `limit`. Reads only the namespace's postings of those stems.
 */
export function memoriesHolding<Row = { id: string; memory: string }>(
  db: DatabaseSync,
  namespaceId: string,
  stems: readonly string[],
  where: { sql: string; params: SQLInputValue[] },
  limit: number,
  columns = "m.id, m.memory",
): Row[] {
  const space = searchSpace(db, namespaceId, "memories");
  if (!space || stems.length === 0) return [];
  const postings = postingsOf(db, space.id, stems, true);
  const units = new Map<string, number>();
  for (const p of postings) units.set(p.term, (units.get(p.term) ?? 0) + 1);
  const score = new Map<number, number>();
  for (const p of postings) score.set(p.unit, (score.get(p.unit) ?? 0) + 1 / (units.get(p.term) ?? 1));
  const ranked = [...score].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([unit]) => unit);
  const out: Row[] = [];
  // Visible ones in rank order, a window at a time.
  for (let from = 0; from < ranked.length && out.length < limit; from += limit) {
    const rows = statement(
      db,
      `SELECT ${columns} FROM json_each(?) j CROSS JOIN memories m ON m.rowid = j.value
       WHERE ${where.sql} ORDER BY j.key`,
    ).all(JSON.stringify(ranked.slice(from, from + limit)), ...where.params) as Row[];
    out.push(...rows.slice(0, limit - out.length));
  }
  return out;
}
