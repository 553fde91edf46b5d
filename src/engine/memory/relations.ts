import type { Metadata } from "../../api/common.js";
import {
  addRelation,
  insertMemory,
  isExpired,
  latestByKey,
  latestBySubject,
  latestBySubjectAttribute,
  latestByText,
  type MemoryDraft,
  type MemoryRow,
  memoriesAbout,
  memoryById,
  memoryMetadata,
  memoryTermFrequency,
  mergeSource,
  type NewMemoryRow,
  normalizeMemory,
  retireMemory,
} from "../store/memory-draft.js";
import { type QueryTerm, stemTexts } from "../text/terms.js";
import { holdsOne } from "./extract/slots.js";
import type { ExtractedFact } from "./extract/types.js";
import { matchesFilterByMetadata } from "./filter-by-metadata.js";

/**
 * A fact as the dreamer applies it: an extractor may give a dynamic fact its own expiry, and the
 * dreamer adds its embedding when an embedder is configured.
 */
export type Fact = ExtractedFact & {
  forgetAfter?: string | null;
  vector?: { model: string; embedding: Float32Array };
  /** Who said the fact's source turn, lowercased (conversations); the dreamer sets it. */
  speaker?: string | null;
  /** `[day]` and the source turn with the turns around it; the dreamer sets it. */
  context?: string;
};

/**
 * Slots that hold one value at a time (extract/slots.ts): a new value for the same subject replaces
 * the old one (someone lives in one place, has one job, one diet, one favourite of a kind, likes or
 * dislikes a thing). Others add up: a second pet, child, degree or language is more, not instead.
 * An open predicate (a slot the table does not have) adds up.
 */
const singleValued = holdsOne;

/**
 * Whether a new fact retires the older memory of the same subject and attribute: only a state fact
 * (static, stated without a date of its own) over an older state fact of a single-valued attribute,
 * told by the same source of truth (the same speaker: what Bob says about where he lives does not
 * retire what Alice said). Dated facts are events: an event never supersedes another.
 */
export function supersedes(
  fact: { isStatic: boolean; eventDate: string | null; attribute: string | null; speaker?: string | null },
  older: { is_static: number; event_date: string | null; attribute: string | null; speaker?: string | null },
): boolean {
  if (!fact.attribute || fact.attribute !== older.attribute || !singleValued(fact.attribute)) return false;
  if (!fact.isStatic || older.is_static !== 1) return false;
  if (fact.eventDate !== null || older.event_date !== null) return false;
  const a = fact.speaker ?? null;
  const b = older.speaker ?? null;
  return a === null || b === null || a === b;
}

/** The document the facts came from. */
export interface FactSource {
  namespaceId: string;
  documentId: string;
  /** The document's metadata: it becomes the memory's metadata. */
  metadata: Metadata;
  /** Expiry of every memory from this document (metadata `forgetAfter`), as an ISO timestamp. */
  forgetAfter: string | null;
  /** Only memories whose source documents match serve as context (and as relation targets). */
  filterByMetadata: Metadata | null;
}

export type Outcome = "created" | "updated" | "extended" | "derived" | "merged";

export interface AppliedFact {
  memoryId: string;
  outcome: Outcome;
  /** The existing memory it updates, extends, derives from or was merged into. */
  relatedTo: string | null;
}

/** Token-set similarity at or above which two facts are the same fact told again. */
export const DUPLICATE_JACCARD = 0.9;
/** Share of an older fact's words a newer fact about the same subject holds to extend it. */
export const EXTENDS_CONTAINMENT = 0.8;
/** Share of words an inference shares with a fact it is derived from (when no subject links them). */
const DERIVES_OVERLAP = 0.3;
/** Candidates fetched by shared words, besides those of the same subject and attribute. */
const TEXT_CANDIDATES = 10;
/** The rarest words of a fact that look up candidates by text (a repeated fact holds them). */
const TEXT_TERMS = 3;
/**
 * Most index rows a look-up by words may rank (by the words' document frequencies): words are
 * taken rarest first while they fit. A fact whose every word is this common is looked up by its
 * exact text and its subject only.
 */
const TEXT_POSTINGS = 500;
/** Most recent memories of the fact's subject it is compared with (a subject may hold thousands). */
const SUBJECT_CANDIDATES = 64;

/**
 * The stems of the fact's rarest words (the namespace's document frequencies): what a repeated or
 * near-identical fact shares with it, at a cost that does not grow with the namespace. Words no
 * memory holds are left out.
 */
async function rareTerms(db: MemoryDraft, namespaceId: string, terms: QueryTerm[]): Promise<string[]> {
  if (terms.length === 0) return [];
  const df = await memoryTermFrequency(
    db,
    namespaceId,
    terms.map((t) => t.stems[0] ?? ""),
  );
  const ranked = terms
    .map((t, i) => ({ t, df: df[i]! }))
    .filter((x) => x.df > 0)
    .sort((a, b) => a.df - b.df);
  const chosen: QueryTerm[] = [];
  let postings = 0;
  for (const x of ranked) {
    if (chosen.length === TEXT_TERMS || postings + x.df > TEXT_POSTINGS) break;
    chosen.push(x.t);
    postings += x.df;
  }
  return chosen.flatMap((t) => t.stems);
}

const normalize = normalizeMemory;

const NEGATION = /\b(not|no|never|none|nobody|nothing|neither|nor|cannot)\b|n't\b|n’t\b/i;
const isNegated = (s: string) => NEGATION.test(s);

// Function words: they say nothing about what a fact is about.
const FUNCTION_WORDS =
  "a an the and or but of to in on at by for with from as is are was were be been being has have had do does " +
  "did it its this that these those he she they them his her their i me my we our you your who which what " +
  "there here then than so also just very s t";
let functionStems: Set<string> | null = null;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** Each word's stems as the index's tokenizer makes them (a word always stems the same way). */
const wordStems = new Map<string, string[]>();

/** Each text's words with their stems, in order; the tokenizer runs once, on words not seen before. */
function wordsOf(texts: readonly string[]): { word: string; stems: string[] }[][] {
  const words = texts.map((t) => t.toLowerCase().match(WORD) ?? []);
  const missing = [...new Set(words.flat())].filter((w) => !wordStems.has(w));
  if (missing.length > 0) {
    if (wordStems.size + missing.length > 200_000) wordStems.clear();
    const stems = stemTexts(missing);
    for (const [i, w] of missing.entries()) wordStems.set(w, stems[i] ?? []);
  }
  return words.map((list) => list.map((word) => ({ word, stems: wordStems.get(word) ?? [] })));
}

function functionStemSet(): Set<string> {
  functionStems ??= new Set(stemTexts([FUNCTION_WORDS])[0] ?? []);
  return functionStems;
}

/** Content stems of each text, as the index stems them (function words dropped). */
function stemsOf(texts: readonly string[]): Set<string>[] {
  const stop = functionStemSet();
  return wordsOf(texts).map((list) => new Set(list.flatMap((w) => w.stems).filter((x) => !stop.has(x))));
}

/** A fact's content words as look-up terms, one per distinct stem (at most 32). */
function termsOf(text: string): QueryTerm[] {
  const stop = functionStemSet();
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  for (const { word, stems } of wordsOf([text])[0]!) {
    const key = stems.join(" ");
    if (stems.length === 0 || stems.every((x) => stop.has(x)) || seen.has(key)) continue;
    seen.add(key);
    terms.push({ text: word, stems });
    if (terms.length === 32) break;
  }
  return terms;
}

function overlap(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const x of a) if (b.has(x)) n++;
  return n;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  const shared = overlap(a, b);
  return shared / (a.size + b.size - shared);
}

interface MemoryText {
  norm: string;
  stems: Set<string>;
  negated: boolean;
  /** Who said it, when this process inserted it (the row's own column is set after its document's facts). */
  speaker?: string | null;
}

interface Candidate extends MemoryText {
  row: MemoryRow;
}

/**
 * A memory's text never changes, and its id is never reused: what relation detection derives from
 * it is kept across documents (bounded, oldest entries dropped first).
 */
const memoryTexts = new Map<string, MemoryText>();
const MEMORY_TEXTS = 50_000;

function rememberText(id: string, text: MemoryText): void {
  if (memoryTexts.size >= MEMORY_TEXTS) memoryTexts.delete(memoryTexts.keys().next().value!);
  memoryTexts.set(id, text);
}

function textsOf(rows: readonly MemoryRow[]): MemoryText[] {
  const missing = rows.filter((r) => !memoryTexts.has(r.id));
  if (missing.length > 0) {
    const stems = stemsOf(missing.map((r) => r.memory));
    for (const [i, r] of missing.entries()) {
      rememberText(r.id, { norm: normalize(r.memory), stems: stems[i]!, negated: isNegated(r.memory) });
    }
  }
  return rows.map((r) => memoryTexts.get(r.id)!);
}

/**
 * Relates each extracted fact to the namespace's latest memories and writes it into `db`, a draft
 * of the namespace's memories that the store commits with the document (store/memory-draft.ts):
 * - the same fact again (same normalized text, or near-identical words) is merged: no second
 *   memory, only a new source; a memory the user forgot stays forgotten;
 * - added detail about the same subject (it holds the older fact's words and more) `extends` it:
 *   both stay valid;
 * - a new fact about the same subject and attribute with other content `updates` the older one:
 *   a new version (version + 1, parent and root set), the older one is no longer latest;
 * - an inferred fact `derives` from the facts it was drawn from (is_inference 1);
 * - anything else is a new memory.
 * Facts are applied in order, so a later fact of the same document sees the earlier ones.
 */
export async function applyFacts(
  db: MemoryDraft,
  src: FactSource,
  facts: readonly Fact[],
): Promise<AppliedFact[]> {
  const at = new Date().toISOString();
  const out: AppliedFact[] = [];
  const kept = facts.map((f) => ({ ...f, memory: f.memory.trim() })).filter((f) => f.memory !== "");
  // One tokenizer pass for the whole document's facts.
  const stems = stemsOf(kept.map((f) => f.memory));
  // A fact's look-ups by words are chosen by the committed index alone: known before any fact is
  // applied, the rows they ask for are read ahead together.
  const lookups = await Promise.all(kept.map((f) => textLookups(db, src.namespaceId, f)));
  await db.readAheadByText(lookups.flat(), TEXT_CANDIDATES);
  for (const [i, fact] of kept.entries())
    out.push(await applyOne(db, src, fact, stems[i]!, lookups[i]!, out, at));
  return out;
}

/** Old values a correction names: the memories holding them are candidates too. */
const replacesOf = (fact: Fact) => (fact.replaces ?? []).filter((r) => r.trim() !== "");

/**
 * The lists of stems a fact's candidates are looked up by (latestByText): its rarest words, and
 * each old value it names as replaced.
 */
async function textLookups(db: MemoryDraft, namespaceId: string, fact: Fact): Promise<string[][]> {
  const out: string[][] = [];
  const rare = await rareTerms(db, namespaceId, termsOf(fact.memory));
  if (rare.length > 0) out.push(rare);
  for (const value of replacesOf(fact)) {
    const stems = termsOf(value).flatMap((t) => t.stems);
    if (stems.length > 0) out.push(stems);
  }
  return out;
}

async function applyOne(
  db: MemoryDraft,
  src: FactSource,
  fact: Fact,
  stems: Set<string>,
  lookups: readonly (readonly string[])[],
  earlier: AppliedFact[],
  at: string,
): Promise<AppliedFact> {
  const norm = normalize(fact.memory);
  const negated = isNegated(fact.memory);
  const subject = fact.subject?.trim().toLowerCase() || null;
  const forgetAfter = earliest(src.forgetAfter, normalizeExpiry(fact.forgetAfter));
  const attribute = fact.attribute?.trim().toLowerCase() || null;
  const speaker = fact.speaker?.toLowerCase() ?? null;
  const replaces = replacesOf(fact);
  const candidates = await candidatesFor(db, src, fact.memory, subject, attribute, lookups);
  const insert = async (m: NewMemoryRow): Promise<MemoryRow> => {
    const row = await insertMemory(db, m);
    // The next facts (of this document and later ones) compare with it without re-reading it.
    rememberText(row.id, { norm, stems, negated, speaker });
    return row;
  };
  // Expired (past forget_after) memories count as gone: they neither absorb nor anchor new facts.
  const usable = candidates.filter((c) => !isExpired(c.row, at));
  const live = usable.filter((c) => c.row.is_forgotten === 0);

  const duplicate = usable.find(
    (c) =>
      c.negated === negated &&
      (c.norm === norm || (stems.size > 0 && jaccard(c.stems, stems) >= DUPLICATE_JACCARD)),
  );
  if (duplicate) {
    await mergeSource(db, duplicate.row, src.documentId, src.metadata, forgetAfter, fact.source);
    return { memoryId: duplicate.row.id, outcome: "merged", relatedTo: duplicate.row.id };
  }

  const base = {
    namespaceId: src.namespaceId,
    memory: fact.memory,
    metadata: src.metadata,
    isStatic: fact.isStatic,
    isInference: fact.isInference === true,
    subject,
    subjectKind: fact.subjectKind ?? null,
    attribute,
    value: fact.value ?? null,
    polarity: fact.polarity ?? "is",
    eventDate: fact.eventDate,
    forgetAfter,
    documentId: src.documentId,
    source: fact.source,
    vector: fact.vector,
    // A new memory gets its source's context and speaker (a merged one keeps its first source's).
    context: fact.context,
    speaker: fact.speaker,
  };

  // A known memory said again with a value corrected ("I meant Tuesday"): its next version, of its
  // subject, slot and kind, when it is still current.
  const restated = fact.restates ? await memoryById(db, src.namespaceId, fact.restates) : undefined;
  if (restated && restated.is_latest === 1 && restated.is_forgotten === 0) {
    const row = await insert({
      ...base,
      isStatic: restated.is_static === 1,
      subject: restated.subject,
      subjectKind: restated.subject_kind,
      attribute: restated.attribute,
      // Its value stays where the correction left it, else is not known.
      value:
        restated.fact_value !== null && fact.memory.includes(restated.fact_value)
          ? restated.fact_value
          : null,
      parent: restated,
    });
    return { memoryId: row.id, outcome: "updated", relatedTo: restated.id };
  }

  if (subject && !base.isInference && fact.corrects) {
    const corrected = correctedBy(live, subject, base.attribute, replaces, speaker);
    if (corrected) {
      // A change that names no slot of its own ("sold the Clio") takes the slot of what it ends.
      const row = await insert({
        ...base,
        attribute: base.attribute ?? corrected.row.attribute,
        parent: corrected.row,
      });
      await retireValues(db, row, live, corrected.row, speaker);
      return { memoryId: row.id, outcome: "updated", relatedTo: corrected.row.id };
    }
  }

  if (subject && !base.isInference) {
    const extended = live
      .filter((c) => c.row.subject === subject && c.negated === negated && c.stems.size > 0)
      .map((c) => ({ c, containment: overlap(c.stems, stems) / c.stems.size }))
      .filter((x) => x.containment >= EXTENDS_CONTAINMENT && stems.size > x.c.stems.size)
      .sort((a, b) => b.containment - a.containment)[0];
    if (extended) {
      const row = await insert(base);
      await addRelation(db, row.id, extended.c.row.id, "extends");
      return { memoryId: row.id, outcome: "extended", relatedTo: extended.c.row.id };
    }
    if (base.attribute) {
      // Candidates are newest first: the current value of the attribute is the first.
      const older = live.find((c) => c.row.subject === subject && c.row.attribute === base.attribute);
      // The row's speaker column, else who said it when this process stored it.
      const olderSpeaker = older?.row.speaker ?? older?.speaker ?? null;
      if (older && supersedes({ ...base, speaker }, { ...older.row, speaker: olderSpeaker })) {
        const row = await insert({ ...base, parent: older.row });
        await retireValues(db, row, live, older.row, speaker);
        return { memoryId: row.id, outcome: "updated", relatedTo: older.row.id };
      }
    }
  } else if (!subject && !base.isInference) {
    // Without a subject, only a fact that literally holds an older one extends it.
    const extended = live.find(
      (c) => c.negated === negated && c.norm.length > 0 && norm.includes(c.norm) && norm !== c.norm,
    );
    if (extended) {
      const row = await insert(base);
      await addRelation(db, row.id, extended.row.id, "extends");
      return { memoryId: row.id, outcome: "extended", relatedTo: extended.row.id };
    }
  }

  if (base.isInference) {
    const row = await insert(base);
    const sources = await derivationSources(db, live, earlier, subject, stems);
    for (const id of sources) await addRelation(db, row.id, id, "derives");
    return { memoryId: row.id, outcome: "derived", relatedTo: sources[0] ?? null };
  }

  const row = await insert(base);
  return { memoryId: row.id, outcome: "created", relatedTo: null };
}

/**
 * The latest memories a fact may relate to (filterByMetadata applied), newest first: those of the
 * same normalized text (repeats), the same subject and attribute's (updates), the subject's most recent (extends), and those sharing the
 * fact's rarest words (repeats, and relations without a subject). Each look-up is bounded, so the
 * cost of a fact does not grow with the namespace.
 */
async function candidatesFor(
  db: MemoryDraft,
  src: FactSource,
  text: string,
  subject: string | null,
  attribute: string | null,
  /** Lists of stems to look memories up by (textLookups). */
  lookups: readonly (readonly string[])[],
): Promise<Candidate[]> {
  const rows = new Map<string, MemoryRow>();
  const add = (list: MemoryRow[]) => {
    for (const r of list) rows.set(r.id, r);
  };
  add(await latestByKey(db, src.namespaceId, text));
  if (subject && attribute) add(await latestBySubjectAttribute(db, src.namespaceId, subject, attribute));
  if (subject) add(await latestBySubject(db, src.namespaceId, subject, SUBJECT_CANDIDATES));
  for (const stems of lookups) add(await latestByText(db, src.namespaceId, stems, TEXT_CANDIDATES));
  const filter = src.filterByMetadata;
  const kept = [...rows.values()]
    .filter((r) => !filter || matchesFilterByMetadata(memoryMetadata(r), filter))
    .sort((a, b) =>
      a.created_at === b.created_at ? b.rowid - a.rowid : a.created_at < b.created_at ? 1 : -1,
    );
  const texts = textsOf(kept);
  return kept.map((row, i) => ({ row, ...texts[i]! }));
}

/**
 * The memory a correction supersedes: the newest of the same subject (or a thing of theirs: "the
 * user's flight" for "the user") that holds every word of an old value the correction names; else,
 * for a one-valued attribute, the newest of the same subject and attribute, whether it was told as
 * a state or as a dated event ("moved to Porto in 2023" for "actually I moved to Braga").
 */
function correctedBy(
  live: Candidate[],
  subject: string,
  attribute: string | null,
  replaces: readonly string[],
  speaker: string | null,
): Candidate | undefined {
  // As for any update, only the same source of truth corrects a memory: what Bob says does not
  // retire what Alice said.
  const sameSource = (c: Candidate) => {
    const said = c.row.speaker ?? c.speaker ?? null;
    return speaker === null || said === null || said === speaker;
  };
  const theirs = (c: Candidate) =>
    sameSource(c) && (c.row.subject === subject || (c.row.subject?.startsWith(`${subject}'s `) ?? false));
  const values = stemsOf(replaces).filter((v) => v.size > 0);
  const holding = live.find((c) => theirs(c) && values.some((v) => [...v].every((x) => c.stems.has(x))));
  if (holding) return holding;
  if (!attribute || !singleValued(attribute)) return undefined;
  return live.find((c) => sameSource(c) && c.row.subject === subject && c.row.attribute === attribute);
}

/**
 * A new value of a one-valued slot retires every value the slot still held for its subject, not
 * only the one it is the next version of: after "drinks a cortado" and "no longer drinks coffee",
 * "switched to green tea" leaves green tea alone as the current drink. Events told with a date of
 * their own stay (what happened then is still so), as do other speakers' facts.
 */
async function retireValues(
  db: MemoryDraft,
  row: MemoryRow,
  live: Candidate[],
  parent: MemoryRow,
  speaker: string | null,
): Promise<void> {
  if (!row.attribute || !row.subject || !singleValued(row.attribute) || row.polarity !== "is") return;
  for (const c of live) {
    const r = c.row;
    if (r.id === parent.id || r.is_latest !== 1 || r.subject !== row.subject || r.attribute !== row.attribute)
      continue;
    if (r.event_date !== null && r.is_static !== 1 && r.polarity === "is") continue;
    const said = r.speaker ?? c.speaker ?? null;
    if (speaker !== null && said !== null && said !== speaker) continue;
    await retireMemory(db, row.id, r);
    r.is_latest = 0;
  }
}

/**
 * What an inference is drawn from: this document's stated facts about the same subject, else the
 * existing memories that share the most words with it (at most three).
 */
async function derivationSources(
  db: MemoryDraft,
  live: Candidate[],
  earlier: AppliedFact[],
  subject: string | null,
  stems: Set<string>,
): Promise<string[]> {
  const stated = earlier.filter((a) => a.outcome !== "derived");
  if (subject && stated.length > 0) {
    const ids = stated.map((a) => a.memoryId);
    const about = await memoriesAbout(db, ids, subject);
    if (about.length > 0) return about.slice(0, 3);
  }
  return live
    .filter((c) => !c.row.is_inference && c.stems.size > 0 && stems.size > 0)
    .map((c) => ({ id: c.row.id, share: overlap(c.stems, stems) / Math.min(c.stems.size, stems.size) }))
    .filter((x) => x.share >= DERIVES_OVERLAP)
    .sort((a, b) => b.share - a.share)
    .slice(0, 3)
    .map((x) => x.id);
}

/**
 * An expiry as the store compares it (a full ISO timestamp); a date alone means its start (UTC).
 * Anything unparseable is no expiry.
 */
export function normalizeExpiry(value: unknown): string | null {
  if (typeof value !== "string" || value.trim() === "") return null;
  const s = value.trim();
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

const earliest = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a < b ? a : b);
