/** Memory extraction ("dreaming"): turns a document's text into short, self-contained facts. */

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
  /** Normalized subject ("caroline"). */
  subject: string | null;
  /** Normalized attribute key for update detection ("home"), null if none. */
  attribute: string | null;
  /** YYYY-MM-DD the fact is about, when known. */
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
}

export interface Extractor {
  readonly name: string;
  extract(input: ExtractionInput, signal?: AbortSignal): Promise<ExtractedFact[]>;
}
