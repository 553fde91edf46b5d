import { afterOpeningTime } from "./markers.js";
import { analyse, type Token } from "./nlp.js";

/** Words that say someone is a person, or is someone's: the extractor and the profile share them. */

/** The subject key the extractors give the user when no context names them. */
export const USER_SUBJECT = "the user";

/** Nouns before a name that make it a person's ("my sister Alice", "our friend Bob"). */
export const PERSON_NOUNS: ReadonlySet<string> = new Set([
  "sister",
  "brother",
  "mom",
  "mother",
  "dad",
  "father",
  "son",
  "daughter",
  "friend",
  "wife",
  "husband",
  "partner",
  "boyfriend",
  "girlfriend",
  "cousin",
  "aunt",
  "uncle",
  "grandma",
  "grandpa",
  "grandmother",
  "grandfather",
  "colleague",
  "coworker",
  "boss",
  "neighbor",
  "neighbour",
  "roommate",
  "niece",
  "nephew",
  "kid",
  "child",
  "teacher",
  "mentor",
  "fiance",
  "fiancee",
  "manager",
  "teammate",
  "lead",
  "client",
  "customer",
  "doctor",
  "landlord",
  "coach",
  "classmate",
  "assistant",
  "report",
]);

/**
 * Someone a person has, besides PERSON_NOUNS: more relatives and roles, and pets (a pet's likes
 * are not its owner's either). "The user's CTO, Priya Raman" or "the user's dog Rex" is someone
 * other than the user.
 */
export const RELATION_NOUNS: ReadonlySet<string> = new Set([
  ...PERSON_NOUNS,
  ..."parent sibling spouse grandson granddaughter grandchild stepmother stepfather stepson stepdaughter in-law baby toddler".split(
    " ",
  ),
  ..."cofounder co-founder founder ceo cto cfo coo vp director supervisor employee intern contractor tenant therapist dentist lawyer accountant nanny babysitter ex".split(
    " ",
  ),
  ..."pet dog cat puppy kitten parrot hamster horse rabbit".split(" "),
]);

/** Relations of a partner: "we" said by someone with one is the two of them. */
const PARTNERS = new Set([
  "wife",
  "husband",
  "partner",
  "spouse",
  "boyfriend",
  "girlfriend",
  "fiance",
  "fiancee",
]);

/** A person the text has introduced: their name as written and who they are to whom. */
export interface Person {
  name: string;
  /** Their relation ("wife", "colleague"), when the text says it. */
  relation: string | null;
  /** Whose relation they are (the speaker's key: "the user", "caroline"). */
  of: string | null;
}

/**
 * Known memories' sentences as read (their tokens, which reading never changes): a namespace's recent
 * memories are recalled again for every document it adds (50 a document, parsed anew they were a
 * fifth of an ingest's time). A parse depends on the text alone, so one bounded cache serves all.
 */
const RECALLED_MAX = 2_048;
const POSSESSIVE = /['’]s\b/;
const recalled = new Map<string, Token[][]>();
function recalledSentences(memory: string): Token[][] {
  let sentences = recalled.get(memory);
  if (sentences) recalled.delete(memory);
  else sentences = analyse(memory).map((s) => s.tokens);
  recalled.set(memory, sentences);
  if (recalled.size > RECALLED_MAX) recalled.delete(recalled.keys().next().value!);
  return sentences;
}

/**
 * The people one text introduces, as it goes: "my wife is Sofia", "my colleague Rui Matos", "we
 * have a son, Tomás", "Priya Raman, my manager". A later "she" or "he" is the person named last;
 * "we" said by someone with a partner is the two of them; a fact about one of them is told with
 * who they are ("Sofia, the user's wife, is a marine biologist").
 */
export class People {
  private readonly known = new Map<string, Person>();
  /** The key of the person named last. */
  last: string | null = null;

  get(key: string): Person | undefined {
    return this.known.get(key.toLowerCase());
  }

  has(key: string): boolean {
    return this.known.has(key.toLowerCase());
  }

  /** Records a person (a relation said later fills one not known yet) and makes them the last named. */
  introduce(name: string, relation: string | null, of: string | null): void {
    const key = name.toLowerCase();
    const before = this.known.get(key);
    this.known.set(key, { name, relation: before?.relation ?? relation, of: before?.of ?? of });
    this.last = key;
  }

  /** Things of someone's, by their head noun: "the standup" said later is "the user's standup". */
  private readonly things = new Map<string, string>();

  /**
   * The key a thing is known by: once someone's thing was named ("the user's standup"), the bare
   * thing said later ("the standup") is that one. Records owned things as it meets them.
   */
  thing(key: string): string {
    const owned = /^.+['’]s (.+)$/.exec(key);
    if (owned) {
      this.things.set(owned[1]!, key);
      return key;
    }
    return this.things.get(key) ?? key;
  }

  /**
   * Reads who a known memory introduces ("The user's wife is Sofia.", "Sofia, the user's wife,
   * ...") and the things of someone's it names ("The user's team standup is on Mondays."), without
   * making anyone the one named last: turns appended later are read without the turns before.
   */
  recall(memory: string): void {
    // A memory speaks of people in the third person: only a possessive says whose they are, so one
    // without a possessive introduces no one and names no one's thing (and is not parsed).
    if (!POSSESSIVE.test(memory)) return;
    const last = this.last;
    for (const tokens of recalledSentences(memory)) this.read(tokens, null);
    this.last = last;
    const thing = /^(.+?)['’]s (?:[\p{L}-]+ )?([\p{L}-]+) (?:is|are|was|were|has|moved|meets|runs)\b/u.exec(
      memory,
    );
    if (thing && !isRelationNoun(thing[2]!.toLowerCase()))
      this.thing(`${thing[1]!.toLowerCase()}'s ${thing[2]!.toLowerCase()}`);
  }

  /** The partner of `of`, when the text named one. */
  partnerOf(of: string): Person | undefined {
    for (const p of this.known.values()) if (p.of === of && p.relation && PARTNERS.has(p.relation)) return p;
    return undefined;
  }

  /**
   * Reads the introductions in a sentence's tokens, said by `speaker` (the key of "I"): a relation
   * noun owned by the speaker ("my wife", "a son") or by someone named ("the user's wife" in a
   * known memory) next to a name, either way round, or a name in apposition to one.
   */
  read(tokens: readonly Token[], speaker: string | null): void {
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (!RELATION_NOUNS.has(t.lemma) || t.pos === "PROPN") continue;
      // "my best friend Marta", "our little girl": the owner before the relation's adjectives.
      let before = i - 1;
      while (before > 0 && before > i - 3 && tokens[before]!.pos === "ADJ") before--;
      const of = ownerAt(tokens, before, speaker);
      if (of === null) continue;
      // "my colleague Rui Matos", "a son, Tomás", "my wife is Sofia", "my manager at Northwind is Priya Raman"
      let j = i + 1;
      if (tokens[j]?.value === ",") j++;
      else if (tokens[j]?.lemma !== "be" && tokens[j]?.pos !== "PROPN") {
        // "my manager at Northwind is ...": the words up to "is" qualify the relation.
        const is = tokens.findIndex((x, k) => k > i && k <= i + 5 && x.lemma === "be");
        if (is < 0) continue;
        j = is;
      }
      if (tokens[j]?.lemma === "be") j++;
      const name = nameAt(tokens, j);
      if (name) this.introduce(name, t.lemma, of);
    }
    // "Priya Raman, my manager," / "Priya Raman is my manager" / "Sofia, the user's wife,"
    for (let i = 0; i < tokens.length; i++) {
      const name = tokens[i]!.pos === "PROPN" && tokens[i - 1]?.pos !== "PROPN" ? nameAt(tokens, i) : null;
      if (!name) continue;
      const after = i + name.split(" ").length;
      if (tokens[after]?.value !== "," && tokens[after]?.lemma !== "be") continue;
      for (let k = after + 2; k <= after + 5 && k < tokens.length; k++) {
        if (!RELATION_NOUNS.has(tokens[k]!.lemma) || tokens[k]!.pos === "PROPN") continue;
        const of = ownerAt(tokens, k - 1, speaker);
        if (of !== null && of !== name.toLowerCase()) this.introduce(name, tokens[k]!.lemma, of);
        break;
      }
    }
  }
}

/**
 * Whose the relation noun after `at` is: the speaker's ("my", "our", "a"), or the owner a
 * possessive names ("the user's", "Caroline's"); null when it is no one's said.
 */
function ownerAt(tokens: readonly Token[], at: number, speaker: string | null): string | null {
  const word = tokens[at]?.lower ?? "";
  if (/^(my|our|mine|a|an)$/.test(word)) return speaker;
  if (!/^['’]s$/.test(word)) return null;
  const words: string[] = [];
  for (let k = at - 1; k >= 0 && /^(DET|NOUN|PROPN)$/.test(tokens[k]!.pos) && words.length < 3; k--)
    words.unshift(tokens[k]!.lower);
  return words.length > 0 ? words.join(" ") : null;
}

/** The capitalised name that starts at `at` ("Rui Matos", "Tomás"), or null. */
function nameAt(tokens: readonly Token[], at: number): string | null {
  const run: string[] = [];
  for (let k = at; tokens[k]?.pos === "PROPN" && /^\p{Lu}/u.test(tokens[k]!.value); k++)
    run.push(tokens[k]!.value);
  return run.length > 0 ? run.join(" ") : null;
}

const NOMINAL = new Set(["NOUN", "PROPN", "PRON"]);

/** The grammatical subject, approximated as the first nominal group before the first verb. */
export function subjectOf(tokens: readonly Token[], owner: Map<string, string>): string | null {
  // The time a clause opens with is not its subject ("Every Friday I play padel").
  for (let i = afterOpeningTime(tokens); i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.pos === "VERB" || t.pos === "AUX") return null;
    const who = owner.get(t.lower === "i'm" || t.lower === "i’m" ? "i" : t.lower);
    if (who !== undefined) {
      // "my sister" is the sister, owned by the speaker; "my colleague Lena Fischer" is Lena Fischer.
      const possessive = /^(my|our|your)$/.test(t.lower);
      const at = possessive
        ? tokens.findIndex((n, k) => k > i && (n.pos === "NOUN" || n.pos === "PROPN"))
        : -1;
      if (at < 0) return who;
      const noun = tokens[at]!;
      if (noun.pos === "NOUN" && tokens[at + 1]?.pos === "PROPN") {
        const run: string[] = [];
        for (let j = at + 1; tokens[j]?.pos === "PROPN"; j++) run.push(tokens[j]!.lower);
        return run.join(" ");
      }
      return `${who}'s ${tokens[compoundHead(tokens, at)]!.lemma}`;
    }
    if (t.pos === "PROPN") {
      const run = [t.lower];
      for (let j = i + 1; tokens[j]?.pos === "PROPN"; j++) run.push(tokens[j]!.lower);
      return run.join(" ");
    }
    if (NOMINAL.has(t.pos) && t.pos !== "PRON") {
      return t.lemma;
    }
  }
  return null;
}

/**
 * The head of a compound noun that starts at `at`: its second noun ("my dentist appointment is at
 * 5" is about the appointment, not the dentist). Only for a singular first noun (a modifier is
 * one: "kids love pizza" is no compound, the tagger reads some verbs as nouns, as it reads a
 * plural -s noun after a name) followed by one that ends it (a verb, an auxiliary, a preposition,
 * the end).
 */
function compoundHead(tokens: readonly Token[], at: number): number {
  const first = tokens[at]!;
  const second = tokens[at + 1];
  if (first.lower !== first.lemma || second?.pos !== "NOUN" || /s$/.test(second.lower)) return at;
  const next = tokens[at + 2]?.pos;
  return next === undefined || /^(AUX|VERB|ADP|PUNCT|PART)$/.test(next) ? at + 1 : at;
}

/** A relation noun as written, singular ("colleagues" -> "colleague"). */
export const isRelationNoun = (word: string) =>
  RELATION_NOUNS.has(word) || (word.endsWith("s") && RELATION_NOUNS.has(word.slice(0, -1)));

/** Whether a subject key is someone of someone's: "the user's husband", "caroline's sister". */
export function isSomeonesRelation(subject: string): boolean {
  const m = /^.+['’]s\s+(.+)$/.exec(subject);
  const last = m?.[1]?.split(/\s+/).at(-1);
  return last !== undefined && isRelationNoun(last);
}
