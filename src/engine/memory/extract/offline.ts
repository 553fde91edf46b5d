import { conversationTurns } from "../../text/conversation.js";
import { type DateSpan, type DayRef, formatDay, parseDocumentDate, resolveDates } from "../../text/dates.js";
import { clauseSubject, splitClauses, verbAsNoun } from "./clauses.js";
import { readContext } from "./context.js";
import { type Correction, correctionOf } from "./corrections.js";
import {
  aboutItself,
  documentShape,
  type Heading,
  headingAt,
  inContext,
  isFragment,
  memoryBudget,
  salience,
} from "./document.js";
import { FILLER, INTENSIFIERS, LIGHT_VERBS, markerSpans, SMALL_TALK } from "./markers.js";
import { analyse, type Sentence, type Token } from "./nlp.js";
import { isSomeonesRelation, PERSON_NOUNS, People, subjectOf, USER_SUBJECT } from "./people.js";
import { readSlot, slotOfWord } from "./slots.js";
import type { ExtractedFact, ExtractionInput, Extractor, SubjectKind } from "./types.js";

/**
 * The offline default: no model. Each statement of a turn or sentence becomes one fact, told in the
 * third person with the speaker named, relative dates made absolute against the document date,
 * greetings, thanks, small talk and questions left out.
 */
export class OfflineExtractor implements Extractor {
  readonly name = "offline";
  async extract(input: ExtractionInput, signal?: AbortSignal): Promise<ExtractedFact[]> {
    signal?.throwIfAborted();
    return extractFacts(input, signal);
  }
}

interface Turn {
  speaker: string | null;
  text: string;
  offset: number;
  /** The turn's own day, when its line says it ("[2026-03-02] user: ..."): its dates count from it. */
  date?: DayRef | null;
}

// Speakers whose turns carry no facts about the people in the conversation.
const AGENT = new Set(["assistant", "system", "ai", "bot", "model", "tool"]);
const USER = new Set(["user", "human", "me"]);

const MODAL = /^(will|would|should|can|could|might|may|must|shall)$/;

/**
 * The turns of a transcript, read by the engine's one turn parser (text/conversation.ts): a
 * timestamp before the role is not part of it, and a line without a role continues the turn
 * before it. Line breaks inside a turn read as spaces (offsets unchanged).
 */
function turnsOf(input: ExtractionInput, body: string, units: readonly number[] = [0]): Turn[] {
  if (input.format !== "conversation")
    return units.map((start, i) => ({
      speaker: null,
      text: body.slice(start, units[i + 1] ?? body.length),
      offset: start,
    }));
  const turns = conversationTurns(input.text).map((t) => ({
    speaker: t.role === "" ? null : t.role,
    text: input.text.slice(t.bodyStart, t.end).replace(/\n/g, " "),
    offset: t.bodyStart,
    date: parseDocumentDate(/^\s*\[([^\]]+)\]/.exec(input.text.slice(t.start, t.bodyStart))?.[1]),
  }));
  return turns.length > 0 ? turns : [{ speaker: null, text: input.text, offset: 0 }];
}

// "[image: a dog on the beach]", "[shares a photo of a dog]", "(photo: ...)": what a turn shared.
const CAPTION =
  /[[(](?:(?:image|photo|picture|pic|video)(?: shared| attached)?:\s*([^\])\n]+)|(?:shares?|shared|sends?|sent|posts?|posted|attaches|attached)\s+((?:an?|the|one|two|three|some)\s[^\])\n]+))[\])]/gi;
// An image or video address: a file to look at, not a fact.
const MEDIA_URL =
  /\b(?:https?:\/\/|www\.)\S+?\.(?:jpe?g|png|gif|webp|heic|bmp|svg|mp4|mov|webm|avi|mkv|m4v)(?:[?#]\S*)?(?=[\s)\]]|$)|\bhttps?:\/\/\S*(?:imgur|giphy|youtu\.?be|vimeo|tenor|instagram|flickr)\S*/gi;

/**
 * The facts of what a turn shared: "[image: a dog on the beach]" said by Caroline is "Caroline
 * shared an image of a dog on the beach", about Caroline.
 */
function captionsOf(text: string): { caption: string; start: number; end: number }[] {
  const out: { caption: string; start: number; end: number }[] = [];
  for (const m of text.matchAll(CAPTION)) {
    let caption = (m[1] ?? m[2] ?? "").trim().replace(/[.\s]+$/, "");
    if (caption === "") continue;
    if (
      m[1] !== undefined &&
      !/^(?:an?|the|some|one|two|three)\s+(?:photo|picture|image|video|pic|selfie|screenshot)\b/i.test(
        caption,
      )
    )
      caption = `an image of ${caption}`;
    out.push({ caption, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** Whether token `i` is the sentence's first word (after fillers and punctuation). */
function opensWith(tokens: Token[], i: number): boolean {
  return (
    i >= 0 &&
    tokens
      .slice(0, i)
      .every((t) => FILLER.has(t.lower) || t.pos === "PUNCT" || t.pos === "INTJ" || t.pos === "CCONJ")
  );
}

/** The text with each span blanked (same length, so offsets hold). */
function blank(text: string, spans: readonly { start: number; end: number }[]): string {
  let out = text;
  for (const s of spans) out = out.slice(0, s.start) + " ".repeat(s.end - s.start) + out.slice(s.end);
  return out;
}

/**
 * The last person a sentence names, who a later "she" or "he" most likely is: a name after a
 * person noun ("my sister Alice"), a name that is the subject of a verb ("Alice moved"), or one of
 * the conversation's other people. Places and things are rarely either. A capitalised word that
 * opens the sentence counts only when the text also writes it capitalised elsewhere (`named`):
 * "Pets look cute" is not about someone called Pets.
 */
function lastPersonIn(
  tokens: Token[],
  people: Set<string>,
  self: string,
  named: Set<string>,
  known?: People,
): string | null {
  let found: string | null = null;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.pos !== "PROPN") continue;
    let j = i;
    while (tokens[j + 1]?.pos === "PROPN") j++;
    const name = tokens
      .slice(i, j + 1)
      .map((x) => x.value)
      .join(" ");
    const before = tokens[i - 1]?.lemma ?? "";
    const after = tokens[j + 1];
    const lower = name.toLowerCase();
    // A first and last name ("Lena Fischer joined") is written as a name even at the start.
    const aName =
      !opensWith(tokens, i) ||
      named.has(t.value) ||
      people.has(lower) ||
      known?.has(lower) === true ||
      (j > i && /^[A-Z][a-z]/.test(tokens[j]!.value));
    if (
      lower !== self &&
      aName &&
      (people.has(lower) ||
        known?.has(lower) === true ||
        PERSON_NOUNS.has(before) ||
        after?.pos === "VERB" ||
        after?.pos === "AUX")
    )
      found = name;
    i = j;
  }
  return found;
}

// A capitalised word after a lower-case word or a comma: written as a name, not as a sentence's first word.
const NAMED = /(?<=[a-z0-9,;]['’]?\s+)[A-Z][a-z]+\b/g;

function thirdPersonSingular(verb: string): string {
  if (/(s|sh|ch|x|z|o)$/i.test(verb)) return `${verb}es`;
  if (/[^aeiou]y$/i.test(verb)) return `${verb.slice(0, -1)}ies`;
  return `${verb}s`;
}

interface Voices {
  /** Who "I", "me", "my" are. */
  self: string;
  /** Who "you" is, when the conversation has exactly one other person. */
  other: string | null;
  /**
   * Whether "we" and "our" are the speaker and others. In a reference document they are its
   * authors, not the user: kept as written (the document's title gives the context).
   */
  plural?: boolean;
  /** Who "we" is beside the speaker: their partner, when the text named one ("the user and Sofia"). */
  companion?: string | null;
  /** The people the text introduced: a sentence naming one names a person. */
  known?: People;
  /** "We" is the speaker's household here (a home, children): the speaker, with no "and others". */
  weAlone?: boolean;
}

interface Rewritten {
  text: string;
  namesPerson: boolean;
  /** The text starts with a proper noun (keeps its capital after "X said"). */
  proper: boolean;
  /** The speaker was added as the unstated subject. */
  impliedSubject: boolean;
  /** A "she"/"he" subject became the person named before it. */
  referred: boolean;
}

/** Rewrites a sentence in the third person with absolute dates. */
function rewrite(
  tokens: Token[],
  spans: DateSpan[],
  voices: Voices,
  names: Set<string>,
  past: boolean,
  referent: string | null = null,
): Rewritten {
  const out: string[] = [];
  let agree = false;
  let namesPerson = false;
  let proper = false;
  let impliedSubject = false;
  let referred = false;
  let selfNamed = false;
  let otherNamed = false;
  let lastSpan: DateSpan | null = null;
  let started = false;
  const { self, other } = voices;
  let lastEnd = -1;
  const emit = (space: string, word: string) => {
    out.push(
      out.length === 0
        ? word
        : // After an opening bracket, and before closing punctuation, no space: "(March 2026)".
          `${space || (/^[.,!?;:)]|^n['’]t$|^['’]/.test(word) || /[([]$/.test(out[out.length - 1]!) ? "" : " ")}${word}`,
    );
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const l = t.lower;
    // Leading fillers ("Yeah, ...", "Oh wow!") are dropped.
    if (!started) {
      if (FILLER.has(l) || t.pos === "INTJ" || t.pos === "PUNCT" || t.pos === "CCONJ") continue;
      // A vocative ("Caroline, ...") addresses the listener; it is not part of the fact.
      if (t.pos === "PROPN" && names.has(l) && tokens[i + 1]?.value === ",") {
        i++;
        continue;
      }
      started = true;
      proper = t.pos === "PROPN";
      // "Dyed my hair last week!": the speaker is the unstated subject of a past-tense verb.
      // Not when the sentence has a verb of its own: "Closed segments are compressed" is about segments.
      if (
        t.pos === "VERB" &&
        l !== t.lemma &&
        !/(ing|s)$/.test(l) &&
        voices.plural !== false &&
        !modifiesSubject(tokens, i)
      ) {
        out.push(self);
        namesPerson = true;
        selfNamed = true;
        impliedSubject = true;
        emit(" ", l);
        continue;
      }
    }
    // Intensifiers add length, not facts: memories are read under a character budget.
    // Inside a hyphenated word ("not-so-great") the intensifier is part of the word.
    const glued =
      (tokens[i - 1]?.value === "-" && t.space === "") ||
      (tokens[i + 1]?.value === "-" && tokens[i + 1]?.space === "");
    if (t.pos === "ADV" && INTENSIFIERS.has(l) && !glued) continue;
    const span = spans.find((s) => t.start >= s.start && t.start < s.end);
    if (span) {
      if (span !== lastSpan) {
        let word = span.replacement;
        const prev = out[out.length - 1]?.trim().toLowerCase();
        if ((prev === "on" || prev === "in") && /^(on|in) /.test(word)) word = word.slice(3);
        emit(t.space, word);
        lastSpan = span;
      }
      continue;
    }
    // The next word that is not an adverb ("no longer" reads as one).
    const next = tokens
      .slice(i + 1)
      .find((n, k, rest) => n.pos !== "ADV" && !(n.lower === "no" && rest[k + 1]?.lower === "longer"));
    const asSubject = next !== undefined && (next.pos === "AUX" || next.pos === "VERB");
    // "Caroline and I go" is one plural subject; "I live here and I work there" opens a clause
    // (a verb came before the "and"), whose "I" takes the third-person verb like any other.
    const afterAnd =
      /^(and|or)$/.test(tokens[i - 1]?.lower ?? "") &&
      !tokens.slice(0, i - 1).some((p) => p.pos === "VERB" || p.pos === "AUX");
    const short = selfNamed && !otherNamed;
    let word: string | null = null;
    // "me-time" is a compound, not a pronoun.
    const compound = tokens[i + 1]?.value === "-" && tokens[i + 1]?.space === "";
    if (compound) {
      // fall through: kept as written
    } else if (
      short &&
      (l === "me" || l === "myself" || l === "my" || l === "mine" || l === "our" || l === "ours")
    ) {
      // Once the speaker is named, "their"/"them" refer back to them: shorter, still unambiguous.
      word = { me: "them", myself: "themselves", my: "their", mine: "theirs", our: "their", ours: "theirs" }[
        l
      ]!;
    } else if (l === "i" || l === "me" || l === "myself") {
      word = self;
      agree = l === "i" && asSubject && !afterAnd && !/^(and|or)$/.test(next?.lower ?? "");
    } else if (referent !== null && (l === "she" || l === "he")) {
      // "She lives in Berlin" about the person named last ("my sister Alice"); "she" and "he" are
      // always subjects (the tagger may miss the verb: "He bakes" reads as two nouns).
      word = referent;
      referred = true;
    } else if (referent !== null && l === "his") {
      word = `${referent}'s`;
    } else if (l === "i'm" || l === "i’m") {
      word = `${self} is`;
    } else if (l === "my" || l === "mine") {
      word = `${self}'s`;
    } else if (voices.plural === false && /^(we|us|our|ours|ourselves)$/.test(l)) {
      // fall through: kept as written
    } else if ((l === "we" || l === "us") && voices.companion) {
      // "We live in Foz" said by someone with a partner: the two of them (the verb stays plural).
      word = `${self} and ${voices.companion}`;
    } else if ((l === "we" || l === "us") && voices.weAlone) {
      // The speaker's household: the speaker, for whom the verb agrees as for "I" ("we live" -> "the user lives").
      word = self;
      agree = l === "we" && asSubject && !afterAnd && !/^(and|or)$/.test(next?.lower ?? "");
    } else if (l === "we" || l === "us") {
      word = `${self} and others`;
    } else if (l === "our" || l === "ours") {
      word = `${self}'s`;
    } else if (l === "ourselves") {
      word = "themselves";
    } else if (other !== null && (l === "you" || l === "yourself")) {
      word = other;
      agree = l === "you" && asSubject && !afterAnd;
    } else if (other !== null && (l === "your" || l === "yours")) {
      word = `${other}'s`;
    }
    if (word !== null) {
      if (word.startsWith(self)) selfNamed = true;
      if (other !== null && word.startsWith(other)) otherNamed = true;
      // "The user" reads "the user" inside a sentence (the first letter is raised at the end).
      if (out.length > 0 && word.startsWith("The ")) word = `the ${word.slice(4)}`;
      namesPerson = true;
      emit(t.space, word);
      continue;
    }
    if (t.pos === "PROPN" && (names.has(l) || voices.known?.has(l) === true)) namesPerson = true;
    // Contractions are spelled out so the third-person verb reads right; "she's" once "she" is a
    // name is "Sofia is" (a name's "'s" would read as hers).
    let value = t.value;
    if (/^['’]s$/.test(l) && t.pos === "AUX" && referred && out.at(-1) === referent) {
      emit(" ", t.lemma === "have" ? "has" : "is");
      continue;
    }
    if (/^['’](m|re|ve|d|ll)$/.test(l)) {
      const full: Record<string, string> = { m: "am", re: "are", ve: "have", d: "would", ll: "will" };
      value = full[l.slice(1)]!;
      if (l.endsWith("d") && t.lemma === "have") value = "had";
      emit(" ", agree ? conjugate(value, t, past) : value);
      if (agree) agree = false;
      continue;
    }
    if (agree && (t.pos === "AUX" || t.pos === "VERB")) {
      value = conjugate(value, t, past);
      agree = false;
    } else if (
      agree &&
      t.pos !== "ADV" &&
      t.pos !== "PART" &&
      !(l === "no" && tokens[i + 1]?.lower === "longer")
    ) {
      // "I no longer drink" agrees past "no longer" as past an adverb: "the user no longer drinks".
      agree = false;
    }
    // Written together, kept together: "5K", "9am", "24/7", "hip-hop" are one word as said.
    if (t.space === "" && lastEnd === t.start && out.length > 0) out.push(value);
    else emit(t.space, value);
    lastEnd = t.end;
  }
  let text = out.join("").trim();
  text = text.replace(/\s*[!.…~]+$/u, "").replace(/\s+/g, " ");
  if (text.length > 0) text = `${text[0]!.toUpperCase()}${text.slice(1)}.`;
  return { text, namesPerson, proper, impliedSubject, referred };
}

/**
 * Whether the verb form at `i` modifies the noun group after it, which is the subject of the
 * sentence's own verb: "Closed segments are compressed", "Shared MIME-info Database lists types".
 */
function modifiesSubject(tokens: Token[], i: number): boolean {
  let k = i + 1;
  while (tokens[k] && (/^(NOUN|PROPN|ADJ)$/.test(tokens[k]!.pos) || tokens[k]!.value === "-")) {
    // "Database lists the": a -s word between the noun group and an article is its verb.
    if (k > i + 1 && verbAsNoun(tokens, k)) return true;
    k++;
  }
  return k > i + 1 && (tokens[k]?.pos === "AUX" || tokens[k]?.pos === "VERB");
}

/**
 * The tagger reads a capitalized first word as a proper noun ("Dyed my hair"); tagged again in
 * lower case, a verb shows as one. Names of the conversation's people are left alone.
 */
function retagOpening(tokens: Token[], names: Set<string>): Token[] {
  const first = tokens[0];
  if (first === undefined || first.pos !== "PROPN" || names.has(first.lower) || tokens.length < 2)
    return tokens;
  const again = analyse(
    `${first.lower} ${tokens
      .slice(1, 4)
      .map((t) => t.value)
      .join(" ")}`,
  )[0]?.tokens[0];
  if (again?.pos !== "VERB") return tokens;
  return [{ ...first, pos: "VERB", lemma: again.lemma }, ...tokens.slice(1)];
}

/**
 * The tagger reads some verbs after a name as plural nouns ("Inês lives in Berlin"): tagged as the
 * verbs they are, with their lemma ("live"), so that the clause has its verb.
 */
function retagNounVerbs(tokens: Token[]): Token[] {
  return tokens.map((t, k) =>
    verbAsNoun(tokens, k)
      ? {
          ...t,
          pos: "VERB",
          lemma: t.lower
            .replace(/ies$/, "y")
            .replace(/(?<=(?:s|sh|ch|x|z|o))es$/, "")
            .replace(/s$/, ""),
        }
      : t,
  );
}

/** Third person singular of a finite verb after "I" or "you" became a name. */
function conjugate(value: string, t: Token, past: boolean): string {
  const l = value.toLowerCase();
  const map: Record<string, string> = { am: "is", are: "is", were: "was", have: "has", do: "does" };
  if (map[l] !== undefined) return map[l]!;
  // "I read it last year": a verb whose past looks like its base stays as it is in a past sentence.
  if (past) return value;
  if (t.pos === "VERB" && l === t.lemma && !MODAL.test(l) && l !== "be") return thirdPersonSingular(value);
  return value;
}

// Subjects that are people: "We made pizza" and "She seemed sad" tell something about someone even
// with one noun or adjective, where "That's so cool" and "Sounds great" do not.
const PERSONAL = new Set(["i", "we", "she", "he", "they"]);

/** Whether the sentence opens with a person as the subject of its verb ("We made", "She really seemed"). */
function personal(tokens: Token[]): boolean {
  const i = tokens.findIndex(
    (t) => !(FILLER.has(t.lower) || t.pos === "PUNCT" || t.pos === "INTJ" || t.pos === "CCONJ"),
  );
  const next = tokens[i + 1]?.pos;
  return i >= 0 && PERSONAL.has(tokens[i]!.lower) && (next === "VERB" || next === "AUX" || next === "ADV");
}

/**
 * True when the sentence carries a fact: something named or done, not only feelings or politeness.
 * A person's state counts ("They were awestruck and humbled").
 */
function carriesFact(tokens: Token[], speakerNames: string[], keywords: Set<string>): boolean {
  if (tokens.some((t) => t.value === "?")) return false;
  let nouns = 0;
  let other = 0;
  let keyword = false;
  let adjectives = 0;
  for (const t of tokens) {
    if (keywords.has(t.lemma)) keyword = true;
    if (t.pos === "NOUN" || t.pos === "PROPN" || t.pos === "NUM") {
      if (SMALL_TALK.has(t.lemma)) continue;
      // A vocative ("Hey Mel!") names the listener, not a fact.
      if (t.pos === "PROPN" && speakerNames.some((n) => n.startsWith(t.lower))) continue;
      nouns++;
    } else if (t.pos === "VERB" && !LIGHT_VERBS.has(t.lemma)) {
      other++;
    } else if (t.pos === "ADJ") {
      other++;
      adjectives++;
    }
  }
  if (keyword && nouns + other >= 1) return true;
  if (personal(tokens) && (nouns >= 1 || adjectives >= 1)) return true;
  return nouns >= 2 || (nouns >= 1 && other >= 1);
}

function isoOf(ref: DayRef): string {
  return `${ref.year}-${String(ref.month).padStart(2, "0")}-${String(ref.day).padStart(2, "0")}`;
}

function normalized(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
}

// Finite verbs that are present tense although not the lemma ("are"; contractions are left out too).
const PRESENT_FORMS = new Set([
  "am",
  "are",
  "'m",
  "’m",
  "'re",
  "’re",
  "'ve",
  "’ve",
  "'ll",
  "’ll",
  "ca",
  "wo",
]);

/**
 * Whether the sentence's first verb is in the past tense: "We celebrated", "It was", not "We are",
 * "I've been", "I'm going" or "I will". The tagger gives no tense, so a form that differs from the
 * lemma and is not an -ing or -s form stands for it.
 */
function finiteIsPast(tokens: Token[]): boolean {
  const verb = tokens.find((t) => t.pos === "VERB" || t.pos === "AUX");
  if (verb === undefined) return false;
  const l = verb.lower;
  if (l === "was") return true;
  return l !== verb.lemma && !/(ing|s)$|^['’]/.test(l) && !PRESENT_FORMS.has(l) && !MODAL.test(l);
}

/**
 * The last day or range before the document's day that the spans name, with its absolute wording
 * ("13 August 2023"); null when they name none (a duration, "tomorrow", "next month").
 */
function pastDay(spans: DateSpan[], today: string): { date: string; said: string } | null {
  for (let i = spans.length - 1; i >= 0; i--) {
    const span = spans[i]!;
    if (span.date === null || span.date >= today) continue;
    const said = /\(([^()]+)\)\s*$/.exec(span.replacement)?.[1] ?? span.replacement;
    return { date: span.date, said };
  }
  return null;
}

export interface OfflineOptions {
  /** Append the document date to dated-less event facts, so "when" questions find them (default true). */
  dateEvents?: boolean;
}

export function extractFacts(
  input: ExtractionInput,
  signal?: AbortSignal,
  opts: OfflineOptions = {},
): ExtractedFact[] {
  const dateEvents = opts.dateEvents ?? true;
  const documentRef = parseDocumentDate(input.documentDate);
  const context = readContext(input);
  // A long or sectioned plain text is a reference document: its structure lines are left out, its
  // statements chosen by salience and told with their heading and title.
  const shape = input.format === "plain" ? documentShape(input.text, input.title ?? null) : null;
  const reference = shape?.reference === true;
  // Any plain text's headings and page furniture are structure, never a memory's words.
  // A reference document is read a unit at a time (a paragraph, a list's item): no sentence runs on.
  const turns = turnsOf(input, shape !== null ? shape.body : input.text, reference ? shape.units : [0]);
  const userLabel = context.userName ?? "The user";
  const nameOf = (speaker: string | null): string =>
    speaker === null || USER.has(speaker.toLowerCase()) ? userLabel : speaker;
  const people = [
    ...new Set(
      turns.map((t) => t.speaker).filter((s): s is string => s !== null && !AGENT.has(s.toLowerCase())),
    ),
  ];
  const speakerNames = people.map((p) => nameOf(p).toLowerCase());
  const names = new Set(speakerNames.flatMap((n) => n.split(/\s+/)));
  // Facts this text states twice come out once. Facts already known are stated again: relation
  // detection merges them, and this document becomes another source of the memory (deleting the
  // first document then leaves it in place).
  const seen = new Set<string>();
  const facts: ExtractedFact[] = [];
  // Each fact's salience and the heading it sits under (its offset; -1 before the first), for
  // reference documents.
  const weighed = new Map<ExtractedFact, { score: number; section: number }>();
  let lastHeading: Heading | null = null;
  const peopleKeys = new Set(speakerNames);
  // The person named last, who a later "she" or "he" is (across turns: the reply often goes on about them).
  let lastPerson: string | null = null;
  // The people the text introduces ("my wife is Sofia"), with who they are to whom, and those the
  // memories already known introduced (turns appended later are read without the turns before).
  const known = new People();
  for (const m of input.existing ?? []) known.recall(m.memory);
  const named = new Set(input.text.match(NAMED) ?? []);
  const dated = (list: DateSpan[]) =>
    list.filter((sp): sp is DateSpan & { date: string } => sp.date !== null);
  for (const turn of turns) {
    // Relative dates count from the turn's own day when its line says it, else the document's.
    const ref = turn.date ?? documentRef;
    const undatedSuffix = (memory: string, isStatic: boolean) =>
      !isStatic && ref !== null && dateEvents
        ? `${memory.slice(0, -1)} (${formatDay(ref.year, ref.month, ref.day)}).`
        : memory;
    signal?.throwIfAborted();
    if (turn.speaker !== null && AGENT.has(turn.speaker.toLowerCase())) continue;
    const self = nameOf(turn.speaker);
    const others = people.filter((p) => p !== turn.speaker);
    const voices: Voices = {
      self,
      other: others.length === 1 ? nameOf(others[0]!) : null,
      ...(reference ? { plural: false } : {}),
      known,
    };
    const kindOf = (
      subject: string | null,
      personSlot = false,
      subjectWritten?: string,
    ): SubjectKind | null => {
      if (subject === null) return null;
      if (subject === selfKey) return selfIsUser ? "user" : "person";
      if (reference) return subject === shape?.title?.toLowerCase() ? "document" : "thing";
      if (known.has(subject) || peopleKeys.has(subject) || isSomeonesRelation(subject)) return "person";
      if (/^\p{Lu}/u.test(subjectWritten ?? "")) {
        // A name a note tells of may be the user's own ("Frank prefers window seats"): not said.
        if (turn.speaker === null) return null;
        // In a chat, a name that lives, works or likes something is someone ("Sofia loves surfing").
        if (personSlot) return "person";
      }
      return "thing";
    };
    const selfKey = self.toLowerCase();
    // "I" is the user in plain text and in the user's turns; in a named speaker's turns, that person.
    const selfIsUser =
      !reference &&
      (turn.speaker === null || USER.has(turn.speaker.toLowerCase()) || self === context.userName);
    const owner = new Map<string, string>();
    // In a reference document "we" are its authors, not the user.
    for (const w of ["i", "me", "my", "mine", "myself", ...(reference ? [] : ["we", "us", "our", "ours"])])
      owner.set(w, selfKey);
    if (voices.other !== null)
      for (const w of ["you", "your", "yours", "yourself"]) owner.set(w, voices.other.toLowerCase());

    // What the turn shared (an image's caption) is a fact about the sharer; an image or video
    // address is nothing to remember. Both are blanked from the text the sentences are read from.
    const captions = captionsOf(turn.text);
    const media = [...turn.text.matchAll(MEDIA_URL)].map((m) => ({
      start: m.index,
      end: m.index + m[0].length,
    }));
    for (const c of captions) {
      const memory = undatedSuffix(`${self} shared ${c.caption}.`, false);
      const key = normalized(memory);
      if (seen.has(key)) continue;
      seen.add(key);
      facts.push({
        memory,
        isStatic: false,
        subject: selfKey,
        attribute: null,
        eventDate: ref !== null ? isoOf(ref) : null,
        isInference: false,
        source: { start: turn.offset + c.start, end: turn.offset + c.end },
      });
    }
    const said = captions.length + media.length > 0 ? blank(turn.text, [...captions, ...media]) : turn.text;

    // The past day this turn named last, which the sentences after it go on about.
    let narrated: { date: string; said: string } | null = null;
    for (const sentence of analyse(said).flatMap((s) => splitClauses(s, separateFacts))) {
      // A sentence after a line break may open with the break as a token: it is no word.
      const tokens = retagNounVerbs(
        retagOpening(
          sentence.tokens.filter((t) => t.value.trim() !== ""),
          names,
        ),
      );
      const pronoun = tokens.findIndex((t) => t.lower === "she" || t.lower === "he" || t.lower === "his");
      // "She" and "he" are never the speaker ("I") and, between two people, never the listener
      // ("you"): a person named before who is either stays unresolved.
      const candidate =
        pronoun < 0
          ? null
          : (lastPersonIn(tokens.slice(0, pronoun), peopleKeys, selfKey, named, known) ?? lastPerson);
      // Who this sentence introduces ("my wife is Sofia"): the person named last, if no other is.
      const introducedBefore = known.last;
      known.read(tokens, selfKey);
      const introduced =
        known.last !== introducedBefore && known.last !== null ? known.get(known.last)!.name : null;
      const referent =
        candidate === null ||
        candidate.toLowerCase() === selfKey ||
        (voices.other !== null && candidate.toLowerCase() === voices.other.toLowerCase())
          ? null
          : candidate;
      lastPerson = lastPersonIn(tokens, peopleKeys, selfKey, named, known) ?? introduced ?? lastPerson;
      voices.companion =
        selfIsUser || turn.speaker !== null ? (known.partnerOf(selfKey)?.name ?? null) : null;
      // "I'm Ana Ribeiro", "my name is Ana": who the speaker is, a fact of its own.
      const name = selfIsUser ? nameSaid(tokens) : null;
      if (name !== null) {
        const memory = `${self}'s name is ${name}.`;
        if (!seen.has(normalized(memory))) {
          seen.add(normalized(memory));
          facts.push({
            memory,
            isStatic: true,
            subject: selfKey,
            subjectKind: "user",
            attribute: "name",
            value: name,
            eventDate: null,
            isInference: false,
            source: { start: turn.offset + sentence.start, end: turn.offset + sentence.end },
          });
        }
        // "I'm Marcus Chen, a nurse at St. Mary's": who they are is a fact of its own as well.
        if (!appositive(tokens)) continue;
      }
      if (!carriesFact(tokens, speakerNames, context.keywords)) continue;
      // A plain text's line of code, list run together or cut sentence is no memory (its passage keeps it).
      if (turn.speaker === null && isFragment(sentence.text)) continue;
      // A reference document's memory is a statement with a subject of its own, or a record's field
      // ("Owner: Amara Okafor."): a changelog's "Moved the marts rebuild into its own DAG" is neither.
      if (
        reference &&
        clauseSubject(tokens) === null &&
        !/^[A-Z][\w -]{1,30}:\s+\S/.test(sentence.text.trim())
      )
        continue;
      const correction = correctionOf(sentence.text);
      // What only says what is no longer so ("not Porto anymore") and the markers it is told with
      // ("by the way") are left out of the new memory (an unsaid subject, taken from the clause
      // before, has no offsets of its own here and stays).
      const drops = [...correction.drop, ...markerSpans(sentence.text)];
      const told =
        drops.length === 0
          ? tokens
          : tokens.filter(
              (t) =>
                t.implied === true ||
                !drops.some((d) => t.start >= sentence.start + d.start && t.start < sentence.start + d.end),
            );
      // "Sorry, I meant Tuesday, not Monday": a value said again for one told before. The fact that
      // held the old value (this text's, else a known memory) is said again with the new one.
      const restated = restatement(told, correction, facts, input.existing ?? []);
      if (restated !== null) {
        if (seen.has(normalized(restated.memory))) continue;
        seen.add(normalized(restated.memory));
        facts.push({
          ...restated,
          source: { start: turn.offset + sentence.start, end: turn.offset + sentence.end },
        });
        continue;
      }
      const spans = ref
        ? resolveDates(sentence.text, ref).map((s) => ({
            ...s,
            start: s.start + sentence.start,
            end: s.end + sentence.start,
          }))
        : [];
      if (spans.length > 0) narrated = ref === null ? null : pastDay(spans, isoOf(ref));
      // A date is not what the sentence is about ("The other day I ..."): its words are not the subject.
      const undated = told.filter((t) => !spans.some((sp) => t.start >= sp.start && t.start < sp.end));
      const subject = subjectOf(undated, owner);
      // Someone introduced by a relation that is a slot of their owner's ("my husband Daniel", "we
      // have a son, Tomás", "Sofia is my wife"): who they are is the owner's fact (their family).
      // A sentence about them that says more ("my husband Daniel is a nurse") is theirs, read
      // without the words that introduce them, and the introduction becomes a fact of its own.
      const intro = introduced === null ? undefined : known.get(introduced);
      const introSlot = intro?.relation ? slotOfWord(intro.relation) : null;
      const introduction =
        intro?.relation && intro.of !== null && introSlot !== null && OWN_RELATION_SLOTS.has(introSlot)
          ? { ...intro, relation: intro.relation, of: intro.of, slot: introSlot }
          : null;
      const aboutIntroduced = introduction !== null && subject === introduction.name.toLowerCase();
      const nameWords = new Set(introduction?.name.split(" ") ?? []);
      const rest = undated.filter(
        (t) => !(t.lemma === introduction?.relation && t.pos !== "PROPN") && !nameWords.has(t.value),
      );
      const saysMore =
        aboutIntroduced &&
        rest.some(
          (t, i) =>
            /^(NOUN|VERB|ADJ|PROPN|NUM)$/.test(t.pos) &&
            !/^(be|have|i['’]m)$/.test(t.lemma) &&
            // "my manager at Northwind is Priya Raman" says who the manager is, no more.
            !(t.pos === "PROPN" && rest[i - 1]?.pos === "ADP"),
        );
      const reading = readSlot(
        saysMore ? rest : undated,
        dated(spans).length > 0,
        correction.noLonger && correction.drop.length === 0,
      );
      const ownersFact =
        introduction !== null && (aboutIntroduced ? !saysMore : reading.slot === introduction.slot);
      // "We live in Foz", "we have a son": a fact of the speaker's own household, the speaker's
      // (with their partner when the text named one); "we went camping" is the speaker and others.
      voices.weAlone = reading.slot !== null && HOUSEHOLD_SLOTS.has(reading.slot);
      const { text, namesPerson, proper, impliedSubject, referred } = rewrite(
        told,
        spans,
        voices,
        names,
        ref !== null && dated(spans).some((sp) => sp.date < isoOf(ref)),
        referent,
      );
      if (text.length < 12) continue;
      // A lasting attribute told in the past tense ("I lost my job", "we adopted a puppy") is what
      // happened that day, not the state now: an event, dated. A change told so ("moved to Braga",
      // "joined Northwind") still sets its slot: it supersedes the value before it (relations.ts).
      const kind = {
        subject,
        attribute: reading.slot,
        isStatic: reading.isStatic && !finiteIsPast(undated),
      };
      let memory =
        namesPerson || turn.speaker === null
          ? text
          : `${self} said ${proper ? text[0] : text[0]!.toLowerCase()}${text.slice(1)}`;
      if (turn.speaker === null && !namesPerson && context.userName === null) memory = text;
      let eventDate = dated(spans)[0]?.date ?? null;
      // "Last night was amazing! We celebrated her birthday.": a past-tense sentence without a date
      // of its own goes on about the day the turn named just before.
      const about = spans.length === 0 && narrated !== null && finiteIsPast(tokens) ? narrated : null;
      // A reference document's statements hold beyond its date: no date is added to them.
      if (!kind.isStatic && ref !== null && !reference) {
        // A duration ("for three years now (since about 2020)") already says when.
        if (about !== null) {
          if (dateEvents) memory = `${memory.slice(0, -1)} (${about.said}).`;
          eventDate = about.date;
        } else if (eventDate === null && spans.length === 0) memory = undatedSuffix(memory, false);
        eventDate ??= isoOf(ref);
      }
      if (shape !== null && shape.headings.length > 0)
        memory = inContext(memory, headingAt(shape, turn.offset + firstWord(sentence)), shape.title);
      const key = normalized(memory);
      if (seen.has(key)) continue;
      seen.add(key);
      // "She prefers async reviews" with no one named before: about someone, never the speaker.
      const stranger =
        referent === null &&
        pronoun >= 0 &&
        /^(she|he)$/.test(tokens[pronoun]!.lower) &&
        opensWith(tokens, pronoun);
      // Plain text says something about the user only in the first person.
      const firstPerson =
        turn.speaker !== null || told.some((t) => owner.has(t.lower) || /^i['’]m$/.test(t.lower));
      let factSubject = stranger
        ? null
        : ownersFact
          ? introduction.of
          : impliedSubject
            ? selfKey
            : referred && referent && opensWith(tokens, pronoun)
              ? referent.toLowerCase()
              : (kind.subject ?? (namesPerson || !firstPerson ? null : selfKey));
      // Slots are a person's (home, work, likes): a manual's "job" is no one's work.
      const slot = stranger || reference ? null : ownersFact ? introduction.slot : kind.attribute;
      const value = ownersFact ? introduction.name : reading.value;
      // "My wife is Sofia", "my favourite language is TypeScript": facts of the speaker's own (who
      // their wife is, what they like), not of a wife or a language.
      if (
        factSubject?.startsWith(`${selfKey}'s `) &&
        slot !== null &&
        (slot.startsWith("favorite") || (OWN_RELATION_SLOTS.has(slot) && /^\p{Lu}/u.test(value ?? "")))
      )
        factSubject = selfKey;
      // A reference document's statements are about the document's subject.
      if (reference && shape.title !== null) factSubject = shape.title.toLowerCase();
      // A thing said again ("the standup") is the one named before ("the user's team standup").
      if (factSubject !== null && kindOf(factSubject) === "thing") factSubject = known.thing(factSubject);
      // A fact about someone the text introduced says who they are: "Sofia, the user's wife, is ...".
      const who = factSubject !== null && factSubject !== selfKey ? known.get(factSubject) : undefined;
      if (who?.relation && who.of !== null)
        memory = withRelation(memory, who.name, who.relation, ownerLabel(who.of));
      facts.push({
        memory,
        isStatic: stranger ? false : kind.isStatic,
        subject: factSubject,
        subjectKind: kindOf(
          factSubject,
          slot !== null && slot !== "schedule",
          undated.find((t) => t.lower === factSubject?.split(" ")[0])?.value,
        ),
        attribute: slot,
        ...(slot !== null && value !== null ? { value } : {}),
        ...(reading.polarity === "no_longer" ? { polarity: "no_longer" as const } : {}),
        eventDate,
        isInference: false,
        source: { start: turn.offset + sentence.start, end: turn.offset + sentence.end },
        // "I live in Madrid now" states the current value: it replaces the last one, even one told
        // as a dated move ("moved to Porto in 2023"); so does a change told as an event ("moved to
        // Braga", "joined Northwind", "sold the Clio"), and a correction.
        ...(correction.cue ||
        (slot !== null && reading.change !== null) ||
        (kind.isStatic && slot !== null && /\bnow\b/i.test(sentence.text))
          ? { corrects: true, replaces: correction.replaces }
          : {}),
      });
      if (introduction !== null && !ownersFact) {
        const owner = ownerLabel(introduction.of);
        const memory = `${owner[0]!.toUpperCase()}${owner.slice(1)} ${introduction.relation} is ${introduction.name}.`;
        if (!seen.has(normalized(memory))) {
          seen.add(normalized(memory));
          facts.push({
            memory,
            isStatic: true,
            subject: introduction.of,
            subjectKind: kindOf(introduction.of),
            attribute: introduction.slot,
            value: introduction.name,
            eventDate: null,
            isInference: false,
            source: { start: turn.offset + sentence.start, end: turn.offset + sentence.end },
          });
        }
      }
      if (reference) {
        const heading = headingAt(shape, turn.offset + firstWord(sentence));
        const opens = heading !== null && heading !== lastHeading;
        lastHeading = heading;
        weighed.set(facts[facts.length - 1]!, {
          score:
            salience(sentence.text, tokens.filter((t) => t.pos === "PROPN").length, opens) +
            aboutItself(sentence.text, shape.title),
          section: heading?.start ?? -1,
        });
      }
    }
  }
  return reference ? mostSalient(facts, weighed, memoryBudget(input.text.length)) : facts;
}

/**
 * A correction that only says a value again ("I meant Tuesday, not Monday": no verb of its own, a
 * few words, one old value named): the latest fact holding the old value, said again with the new
 * one, as its correction. This text's facts are searched first (their subject and slot are known),
 * then the known memories (the fact restates one: memory/relations.ts makes it its next version).
 */
function restatement(
  told: readonly Token[],
  correction: Correction,
  facts: readonly ExtractedFact[],
  existing: readonly { id: string; memory: string }[],
): ExtractedFact | null {
  const old = correction.replaces.length === 1 ? correction.replaces[0]! : null;
  if (!correction.cue || old === null) return null;
  if (told.some((t) => t.pos === "VERB" || t.pos === "AUX" || /^i['’]m$/.test(t.lower))) return null;
  const words = told.filter((t) => t.pos !== "PUNCT" && t.implied !== true);
  if (words.length === 0 || words.length > 4) return null;
  const value = words.map((t) => t.value).join(" ");
  const holding = new RegExp(`\\b${old.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(s?)\\b`, "i");
  // "Mondays" said again as "Tuesdays".
  const swap = (text: string) =>
    text.replace(holding, (_m, plural: string) => `${value}${/s$/i.test(value) ? "" : plural}`);
  const prior = facts.findLast((f) => holding.test(f.memory));
  if (prior)
    return {
      ...prior,
      memory: swap(prior.memory),
      ...(prior.value ? { value: swap(prior.value) } : {}),
      corrects: true,
      replaces: [old],
    };
  const known = existing.find((m) => holding.test(m.memory));
  if (!known) return null;
  return {
    memory: swap(known.memory),
    isStatic: true,
    subject: null,
    attribute: null,
    eventDate: null,
    isInference: false,
    corrects: true,
    replaces: [old],
    restates: known.id,
  };
}

/** Slots "we" tells of a household: the speaker's (and their partner's) home, children, pets. */
const HOUSEHOLD_SLOTS = new Set(["home", "children", "family", "pet", "relationship"]);

/** Slots a speaker's relations are told in ("my wife is Sofia", "my manager is Priya Raman"). */
const OWN_RELATION_SLOTS = new Set(["relationship", "manager", "children", "family"]);

/** "I'm Ana Ribeiro", "my name is Ana", "call me Ana": the name a speaker gives, else null. */
function nameSaid(tokens: readonly Token[]): string | null {
  const words = tokens.filter((t) => t.pos !== "INTJ" && !(t.pos === "PUNCT" && t.value !== ","));
  // "Hi, I'm Marcus": the greeting's comma goes with it.
  while (words[0]?.value === ",") words.shift();
  const lower = words.map((t) => t.lower);
  let at = -1;
  if (/^i['’]m$/.test(lower[0] ?? "")) at = 1;
  else if (lower[0] === "i" && lower[1] === "am") at = 2;
  else if (lower[0] === "my" && lower[1] === "name" && lower[2] === "is") at = 3;
  else if (lower[0] === "call" && lower[1] === "me") at = 2;
  if (at < 0) return null;
  const name: string[] = [];
  for (let k = at; k < words.length && /^\p{Lu}[\p{L}'’-]*$/u.test(words[k]!.value) && name.length < 4; k++)
    name.push(words[k]!.value);
  // The name alone, or before a comma: "I'm Ana Ribeiro, nice to meet you", not "I'm Ana's friend".
  const after = words[at + name.length];
  return name.length > 0 && (after === undefined || after.value === ",") ? name.join(" ") : null;
}

/** Whether a name is followed by who its bearer is: ", a nurse", ", the team's lead". */
function appositive(tokens: readonly Token[]): boolean {
  const comma = tokens.findIndex((t, i) => t.value === "," && tokens[i - 1]?.pos === "PROPN");
  return comma >= 0 && /^(a|an|the)$/.test(tokens[comma + 1]?.lower ?? "");
}

/**
 * The memory told with who its subject is to someone, after their name where it opens it:
 * "Sofia is a marine biologist" -> "Sofia, the user's wife, is a marine biologist" (once: a memory
 * that says the relation already stays as it is).
 */
function withRelation(memory: string, name: string, relation: string, owner: string): string {
  if (!memory.startsWith(`${name} `) || new RegExp(`\\b${relation}\\b`, "i").test(memory)) return memory;
  return `${name}, ${owner} ${relation},${memory.slice(name.length)}`;
}

/** "the user's" inside a sentence, "Caroline's" for a named owner. */
const ownerLabel = (key: string) => (key === USER_SUBJECT ? "the user's" : `${capitalise(key)}'s`);
const capitalise = (key: string) => key.replace(/(^|\s)\p{L}/gu, (c) => c.toUpperCase());

/**
 * Whether two clauses of one subject are separate facts: one of them sets a slot, or tells a change
 * ("I sold the Clio and bought an electric bike", "my favourite language is Python and I'm learning
 * Rust"); a narration ("we went camping and saw a bear") is one.
 */
function separateFacts(left: readonly Token[], right: readonly Token[], otherPerson = false): boolean {
  const slotted = (tokens: readonly Token[]) => {
    const r = readSlot(tokens, false, false);
    // Two people: what either likes is theirs alone.
    if (otherPerson && r.slot !== null && r.isStatic) return true;
    return r.change !== null || (r.byVerb && r.holds === "one" && !/^(likes|dislikes)_/.test(r.slot ?? ""));
  };
  return slotted(left) || slotted(right);
}

/** Where a sentence's first word starts (the tokenizer may open it with the line breaks before). */
function firstWord(sentence: Sentence): number {
  return sentence.tokens.find((t) => t.value.trim() !== "")?.start ?? sentence.start;
}

/**
 * A reference document's few memories: those that say most about it (what it is, who owns it, what
 * was decided and when: document.ts aboutItself) and are most salient, never one that says
 * nothing of its subject (negative salience); at most `budget`, in the document's order. Its
 * passages stay searchable as chunks.
 */
function mostSalient(
  facts: ExtractedFact[],
  weighed: Map<ExtractedFact, { score: number; section: number }>,
  budget: number,
): ExtractedFact[] {
  return facts
    .map((f, i) => ({ f, i, score: weighed.get(f)?.score ?? 0 }))
    .filter((x) => x.score >= 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, budget)
    .sort((a, b) => a.i - b.i)
    .map((x) => x.f);
}
