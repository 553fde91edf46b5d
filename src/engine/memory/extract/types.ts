/**
 * Memory extraction ("dreaming"): turns a document's text into facts. A fact has a subject (the
 * user; a person, known by their relation to the user; a thing; a document), an attribute (a slot
 * of extract/slots.ts, or an open predicate), the value it gives that attribute, a polarity (is so,
 * or no longer so) and the day it became true; and one clean sentence that says it. Supersession
 * (memory/relations.ts) and the profile read the structure, not the words.
 */
import type { Polarity, SubjectKind } from "../../store/memories.js";

export type { Polarity, SubjectKind };

export interface ExtractionInput {
  text: string;
  format: "plain" | "conversation";
  /** ISO date or timestamp the content is from; relative dates are resolved against it. */
  documentDate: string | null;
  entityContext?: string | null;
  supportingContext?: string | null;
  organizationalContext?: string | null;
  /** The document's title, when it has one: the context a reference document's facts are told in. */
  title?: string | null;
  /** Context memories (already filtered by filterByMetadata). */
  existing?: { id: string; memory: string }[];
}

export interface ExtractedFact {
  /** Self-contained fact: subject named, dates absolute ("Caroline moved to Berlin on 7 May 2023"). */
  memory: string;
  /** Identity, preferences, relationships, work, home (true) vs events, plans, recent states (false). */
  isStatic: boolean;
  /** Normalized subject ("caroline", "the user", "standup"). */
  subject: string | null;
  /** Whose the fact is: the user's own, another person's, a thing's or a document's. */
  subjectKind?: SubjectKind | null;
  /** The slot the fact sets ("home", "work", "likes_jazz"), or an open predicate; null if none. */
  attribute: string | null;
  /** The value it gives the slot ("Berlin"), when it names one. */
  value?: string | null;
  /** "no_longer": the value is no longer so ("I no longer drink coffee", "I sold the Clio"). Default "is". */
  polarity?: Polarity;
  /** YYYY-MM-DD the fact became true or happened, when known. */
  eventDate: string | null;
  /** Derived, not stated. */
  isInference?: boolean;
  /** Span in text. */
  source?: { start: number; end: number };
  /**
   * The fact corrects something said before ("actually", "no longer", "correction:"): it supersedes
   * the memory of the same subject holding one of `replaces`, else the latest value of its
   * one-valued attribute, even one told as a dated event.
   */
  corrects?: boolean;
  /** The old values the correction names ("Porto" in "not Porto anymore"). */
  replaces?: string[];
  /**
   * The id of a known memory (ExtractionInput.existing) this fact says again with a value corrected
   * ("Sorry, I meant Tuesday, not Monday"): it becomes that memory's next version, of its subject and slot.
   */
  restates?: string;
}

export interface Extractor {
  readonly name: string;
  extract(input: ExtractionInput, signal?: AbortSignal): Promise<ExtractedFact[]>;
}
