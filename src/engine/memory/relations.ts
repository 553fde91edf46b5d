import type { Metadata } from "../../api/common.js";
import { matchExpression, type QueryTerm, queryTerms, stemTexts } from "../search/terms.js";
import { type Db, transaction } from "../store/db.js";
import type { MemoryRow } from "../store/memories.js";
import type { ExtractedFact } from "./extract/types.js";
import { matchesFilterByMetadata } from "./filter-by-metadata.js";
import {
  addRelation,
  insertMemory,
  latestBySubjectAttribute,
  latestByText,
  memoryMetadata,
  memoryTermFrequency,
  mergeSource,
} from "./repository.js";

/**
 * A fact as the dreamer applies it: an extractor may give a dynamic fact its own expiry, and the
 * dreamer adds its embedding when an embedder is configured.
 */
export type Fact = ExtractedFact & {
  forgetAfter?: string | null;
  vector?: { model: string; embedding: Float32Array };
};

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
const TEXT_CANDIDATES = 40;
/** A word in more than this share of all memories ("user", a name) is left out of the look-up. */
const COMMON_SHARE = 0.05;

/**
 * The query's words minus those too common to tell memories apart (as their idf says), so that
 * looking up candidates stays cheap as a namespace grows; the rarest word is always kept.
 */
function selectiveTerms(db: Db, terms: QueryTerm[]): QueryTerm[] {
  if (terms.length <= 1) return terms;
  const { rows, df } = memoryTermFrequency(
    db,
    terms.map((t) => t.stems[0] ?? ""),
  );
  if (rows < 100) return terms;
  const kept = terms.filter((_, i) => df[i]! <= rows * COMMON_SHARE);
  if (kept.length > 0) return kept;
  const rarest = df.indexOf(Math.min(...df));
  return [terms[rarest]!];
}

const normalize = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

const NEGATION = /\b(not|no|never|none|nobody|nothing|neither|nor|cannot)\b|n't\b|n’t\b/i;
const isNegated = (s: string) => NEGATION.test(s);

// Function words: they say nothing about what a fact is about.
const FUNCTION_WORDS =
  "a an the and or but of to in on at by for with from as is are was were be been being has have had do does " +
  "did it its this that these those he she they them his her their i me my we our you your who which what " +
  "there here then than so also just very s t";
let functionStems: Set<string> | null = null;

/** Content stems of each text, as the index stems them (function words dropped); one tokenizer pass. */
function stemsOf(texts: readonly string[]): Set<string>[] {
  functionStems ??= new Set(stemTexts([FUNCTION_WORDS])[0] ?? []);
  const stop = functionStems;
  return stemTexts(texts).map((stems) => new Set(stems.filter((x) => !stop.has(x))));
}

function overlap(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const x of a) if (b.has(x)) n++;
  return n;
}

interface Candidate {
  row: MemoryRow;
  norm: string;
  stems: Set<string>;
  negated: boolean;
}

/**
 * Relates each extracted fact to the namespace's latest memories and stores it, in one transaction:
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
export function applyFacts(db: Db, src: FactSource, facts: readonly Fact[]): AppliedFact[] {
  return transaction(db, () => {
    const at = new Date().toISOString();
    const out: AppliedFact[] = [];
    const stems = new Map<string, Set<string>>();
    for (const fact of facts) {
      const text = fact.memory.trim();
      if (!text) continue;
      out.push(applyOne(db, src, { ...fact, memory: text }, out, at, stems));
    }
    return out;
  });
}

function applyOne(
  db: Db,
  src: FactSource,
  fact: Fact,
  earlier: AppliedFact[],
  at: string,
  stemCache: Map<string, Set<string>>,
): AppliedFact {
  const norm = normalize(fact.memory);
  const stems = stemsOf([fact.memory])[0]!;
  const negated = isNegated(fact.memory);
  const subject = fact.subject?.trim().toLowerCase() || null;
  const forgetAfter = earliest(src.forgetAfter, normalizeExpiry(fact.forgetAfter));
  const attribute = fact.attribute?.trim().toLowerCase() || null;
  const candidates = candidatesFor(db, src, fact.memory, subject, attribute, stemCache);
  // Expired (past forget_after) memories count as gone: they neither absorb nor anchor new facts.
  const usable = candidates.filter((c) => c.row.forget_after === null || c.row.forget_after > at);
  const live = usable.filter((c) => c.row.is_forgotten === 0);

  const duplicate = usable.find(
    (c) =>
      c.negated === negated &&
      (c.norm === norm ||
        (stems.size > 0 &&
          overlap(c.stems, stems) / new Set([...c.stems, ...stems]).size >= DUPLICATE_JACCARD)),
  );
  if (duplicate) {
    mergeSource(db, duplicate.row, src.documentId, src.metadata, forgetAfter, fact.source);
    return { memoryId: duplicate.row.id, outcome: "merged", relatedTo: duplicate.row.id };
  }

  const base = {
    namespaceId: src.namespaceId,
    memory: fact.memory,
    metadata: src.metadata,
    isStatic: fact.isStatic,
    isInference: fact.isInference === true,
    subject,
    attribute,
    eventDate: fact.eventDate,
    forgetAfter,
    documentId: src.documentId,
    source: fact.source,
    vector: fact.vector,
  };

  if (subject && !base.isInference) {
    const extended = live
      .filter((c) => c.row.subject === subject && c.negated === negated && c.stems.size > 0)
      .map((c) => ({ c, containment: overlap(c.stems, stems) / c.stems.size }))
      .filter((x) => x.containment >= EXTENDS_CONTAINMENT && stems.size > x.c.stems.size)
      .sort((a, b) => b.containment - a.containment)[0];
    if (extended) {
      const row = insertMemory(db, base);
      addRelation(db, row.id, extended.c.row.id, "extends");
      return { memoryId: row.id, outcome: "extended", relatedTo: extended.c.row.id };
    }
    if (base.attribute) {
      // Candidates are newest first: the current value of the attribute is the first.
      const older = live.find((c) => c.row.subject === subject && c.row.attribute === base.attribute);
      if (older) {
        const row = insertMemory(db, { ...base, parent: older.row });
        return { memoryId: row.id, outcome: "updated", relatedTo: older.row.id };
      }
    }
  } else if (!subject && !base.isInference) {
    // Without a subject, only a fact that literally holds an older one extends it.
    const extended = live.find(
      (c) => c.negated === negated && c.norm.length > 0 && norm.includes(c.norm) && norm !== c.norm,
    );
    if (extended) {
      const row = insertMemory(db, base);
      addRelation(db, row.id, extended.row.id, "extends");
      return { memoryId: row.id, outcome: "extended", relatedTo: extended.row.id };
    }
  }

  if (base.isInference) {
    const row = insertMemory(db, base);
    const sources = derivationSources(db, live, earlier, subject, stems);
    for (const id of sources) addRelation(db, row.id, id, "derives");
    return { memoryId: row.id, outcome: "derived", relatedTo: sources[0] ?? null };
  }

  const row = insertMemory(db, base);
  return { memoryId: row.id, outcome: "created", relatedTo: null };
}

/**
 * The latest memories a fact may relate to: the same subject and attribute's, then those sharing its
 * informative words (filterByMetadata applied), newest first.
 */
function candidatesFor(
  db: Db,
  src: FactSource,
  text: string,
  subject: string | null,
  attribute: string | null,
  stemCache: Map<string, Set<string>>,
): Candidate[] {
  const rows = new Map<string, MemoryRow>();
  if (subject && attribute) {
    for (const r of latestBySubjectAttribute(db, src.namespaceId, subject, attribute)) rows.set(r.id, r);
  }
  const match = matchExpression(selectiveTerms(db, queryTerms(text)));
  if (match) for (const r of latestByText(db, src.namespaceId, match, TEXT_CANDIDATES)) rows.set(r.id, r);
  const kept = [...rows.values()]
    .filter((r) => matchesFilterByMetadata(memoryMetadata(r), src.filterByMetadata))
    .sort((a, b) =>
      a.created_at === b.created_at ? b.rowid - a.rowid : a.created_at < b.created_at ? 1 : -1,
    );
  const unstemmed = kept.filter((r) => !stemCache.has(r.id));
  const fresh = stemsOf(unstemmed.map((r) => r.memory));
  for (const [i, r] of unstemmed.entries()) stemCache.set(r.id, fresh[i]!);
  return kept.map((row) => ({
    row,
    norm: normalize(row.memory),
    stems: stemCache.get(row.id)!,
    negated: isNegated(row.memory),
  }));
}

/**
 * What an inference is drawn from: this document's stated facts about the same subject, else the
 * existing memories that share the most words with it (at most three).
 */
function derivationSources(
  db: Db,
  live: Candidate[],
  earlier: AppliedFact[],
  subject: string | null,
  stems: Set<string>,
): string[] {
  const stated = earlier.filter((a) => a.outcome !== "derived");
  if (subject && stated.length > 0) {
    const ids = stated.map((a) => a.memoryId);
    const rows = db
      .prepare("SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?)) AND subject = ?")
      .all(JSON.stringify(ids), subject) as { id: string }[];
    if (rows.length > 0) return rows.slice(0, 3).map((r) => r.id);
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
