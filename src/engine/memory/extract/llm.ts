import { z } from "zod";
import type { ChatModel } from "../../models/chat.js";
import { formatDay, parseDocumentDate } from "../../text/dates.js";
import { correctionOf } from "./corrections.js";
import { documentShape, memoryBudget } from "./document.js";
import { SLOTS } from "./slots.js";
import type { ExtractedFact, ExtractionInput, Extractor } from "./types.js";

/** What the model must answer: the same fields as ExtractedFact, every one present (strict JSON schema). */
export const llmFactsSchema = z.object({
  facts: z.array(
    z.object({
      memory: z.string().min(1).describe("one self-contained fact, subject named, dates absolute"),
      isStatic: z
        .boolean()
        .describe("true: identity, preference, relationship, work, home; false: event, plan, recent state"),
      subject: z.string().nullable().describe('who or what the fact is about, lowercase ("caroline")'),
      subjectKind: z
        .enum(["user", "person", "thing", "document"])
        .nullable()
        .describe("the user themself; another person; a thing or project; the document itself"),
      attribute: z
        .string()
        .nullable()
        .describe(
          `the slot it sets: one of ${SLOTS.map((s) => s.name).join(", ")}, or likes_<thing>, dislikes_<thing>, favorite_<kind>, or another snake_case predicate; null for one-off events`,
        ),
      value: z.string().nullable().describe('the value it gives the slot ("Berlin" for home), null if none'),
      polarity: z.enum(["is", "no_longer"]).describe('"no_longer" when it says the value is no longer so'),
      eventDate: z
        .string()
        .nullable()
        .describe("YYYY-MM-DD the fact became true or happened, null when unknown"),
      isInference: z.boolean().describe("true when derived, not stated"),
    }),
  ),
});
export type LlmFacts = z.infer<typeof llmFactsSchema>;

const SYSTEM = `You extract long-term memories from a document for an AI agent's memory.
Return JSON {"facts": [...]}: each fact is one short, self-contained statement.
Rules:
- Name the subject in every fact; never write "I", "you", "he", "she" or "they". In a conversation, a turn "Speaker: text" is said by Speaker; "you" is the person spoken to.
- Make every date absolute using the document date ("yesterday" -> "7 May 2023"; "last week" -> "the week before 8 May 2023"; "next month" -> "June 2023") and set eventDate (YYYY-MM-DD) when the fact has a date.
- Leave out greetings, thanks, small talk, compliments and questions.
- isStatic: true for lasting facts (identity, preferences, relationships, work, home, skills); false for events, plans and recent states.
- subject: lowercase name of who the fact is about ("the user" for the user); subjectKind: "user", "person" (someone else: name them, with who they are to the user when the text says it), "thing" (a project, an object, an event) or "document" (what a reference document says of its own subject).
- attribute: the slot the fact sets, the same slot for facts that replace each other ("home" for "lives in Berlin" and "moved to Braga"; "work" for "works at Acme" and "joined Northwind"; "vehicle" for "drives a Clio" and "bought an electric bike"); value: the slot's value ("Braga"); polarity: "no_longer" for "no longer drinks coffee", "sold the Clio", "left Acme"; null slot for one-off events. eventDate: the day it became true or happened.
- isInference: true only for facts you derive rather than read.
- Corrections: when the text corrects or replaces something ("actually", "not X anymore", "no longer", "instead", "switched from X to Y", "cancelled X", "correction:", "I was wrong about X"), write the current value and end the fact with "(no longer X)" naming the old value, e.g. "The user lives in Braga (no longer Porto)."; give it the subject and attribute of the fact it replaces. Never list the old value as still true.
- Who said what about whom: a fact about another person is that person's (subject = that person, e.g. "lena fischer"), never the speaker's or the user's preference; keep who they are to the user when the text says it ("The user's colleague Lena Fischer prefers async code reviews."): the user's profile leaves their facts out by it. Resolve "he", "she", "they" to the person they stand for only when the text makes it clear; otherwise leave the fact out rather than guess.
- One fact per memory: "I prefer dark roast coffee and my sister Maya lives in Lisbon" is two facts, the second about Maya.
- Reference documents (manuals, specifications, reports): keep only the facts worth remembering (what something is, values, limits, defaults, rules, owners, decisions, causes), at most about 40 for 20,000 characters. Leave out tables of contents, headings alone, reference lists and bibliographies, page headers, footers and numbers, and sentences about the document itself ("see Section 4", "X is mentioned in Section 2.1", "the figure below"). Each fact must be true on its own: name what it is about, from its heading or the document's title ("Incident 2025-07 (duplicate payments): root cause: missing idempotency key", not "Root cause: missing idempotency key"). "We" in such a document is its authors, not the user.
- "Known memories" are context (who is who, what was said before). List a fact this document states even when it is already known: it is recorded as one more source of that memory.
- Follow the organization's and namespace's guidance on what matters.`;

// Long documents are sent in parts that fit a small model's context, cut at line ends.
const PART_CHARS = 12_000;

function parts(text: string): string[] {
  const out: string[] = [];
  let current = "";
  for (const line of text.split("\n")) {
    if (current.length + line.length + 1 > PART_CHARS && current !== "") {
      out.push(current);
      current = "";
    }
    current = current === "" ? line : `${current}\n${line}`;
    while (current.length > PART_CHARS) {
      out.push(current.slice(0, PART_CHARS));
      current = current.slice(PART_CHARS);
    }
  }
  if (current.trim() !== "") out.push(current);
  return out;
}

/** The user message: contexts, document date, known memories, then the text. */
export function buildPrompt(input: ExtractionInput, text = input.text): string {
  const lines: string[] = [];
  const ref = parseDocumentDate(input.documentDate);
  lines.push(
    `Document date: ${ref ? `${formatDay(ref.year, ref.month, ref.day)} (${input.documentDate})` : "unknown (do not invent dates)"}`,
  );
  lines.push(
    `Format: ${input.format === "conversation" ? 'conversation, one turn per line as "Speaker: text"' : "plain text"}`,
  );
  if (input.organizationalContext) lines.push(`Organization's guidance: ${input.organizationalContext}`);
  if (input.supportingContext) lines.push(`Namespace context: ${input.supportingContext}`);
  if (input.title) lines.push(`Document title: ${input.title}`);
  if (input.entityContext) lines.push(`Document context: ${input.entityContext}`);
  if (input.existing && input.existing.length > 0) {
    lines.push("Known memories:", ...input.existing.slice(0, 50).map((m) => `- ${m.memory}`));
  }
  lines.push("", "Document:", "<<<", text, ">>>");
  return lines.join("\n");
}

const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;

function key(value: string | null): string | null {
  const k = value
    ?.trim()
    .toLowerCase()
    .replace(/[^a-z0-9']+/g, "_")
    .replace(/^_+|_+$/g, "");
  return k ? k : null;
}

/** Memory extraction by a chat model (OpenAI-compatible server, Ollama, vLLM, LM Studio). */
export class LlmExtractor implements Extractor {
  readonly name: string;
  constructor(private readonly chat: ChatModel) {
    this.name = `llm:${chat.model}`;
  }

  async extract(input: ExtractionInput, signal?: AbortSignal): Promise<ExtractedFact[]> {
    // Once per document; known facts pass (relation detection merges them into their memory).
    const seen = new Set<string>();
    const facts: ExtractedFact[] = [];
    for (const part of parts(input.text)) {
      signal?.throwIfAborted();
      const answer = await this.chat.completeJson({
        system: SYSTEM,
        user: buildPrompt(input, part),
        schema: llmFactsSchema,
        ...(signal ? { signal } : {}),
      });
      for (const f of answer.facts) {
        const memory = f.memory.trim();
        if (memory === "" || seen.has(memory.toLowerCase())) continue;
        seen.add(memory.toLowerCase());
        // The prompt asks a correction to name what it replaces ("(no longer Porto)"): the same
        // reading as the offline extractor's turns it into the supersession marker.
        const correction = correctionOf(memory);
        const attribute = key(f.attribute);
        facts.push({
          // A slot set again supersedes its value (as a change told by the offline extractor does).
          ...(correction.cue || (attribute !== null && f.polarity === "no_longer")
            ? { corrects: true, replaces: correction.replaces }
            : {}),
          memory,
          isStatic: f.isStatic,
          subject: key(f.subject)?.replace(/_/g, " ") ?? null,
          ...(f.subjectKind ? { subjectKind: f.subjectKind } : {}),
          attribute,
          ...(f.value ? { value: f.value } : {}),
          ...(f.polarity === "no_longer" ? { polarity: "no_longer" as const } : {}),
          eventDate: f.eventDate !== null && ISO_DAY.test(f.eventDate) ? f.eventDate : null,
          isInference: f.isInference,
        });
      }
    }
    // A model that lists every statement of a manual is held to the offline extractor's rate.
    if (input.format === "plain" && documentShape(input.text, input.title ?? null).reference)
      return facts.slice(0, memoryBudget(input.text.length));
    return facts;
  }
}
