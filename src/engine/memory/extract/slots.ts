import type { Token } from "./nlp.js";
import type { Polarity } from "./types.js";

/**
 * The slots a fact can set, as a table. A slot holds one value at a time (a new value replaces the
 * old: where someone lives, their work) or several (they add up: children, pets, what they like);
 * it is lasting (identity, home, work, family, diet, preferences: the profile's static part) or
 * recent (events, plans). A clause sets a slot when its verb or one of its words names it. Keys
 * are lemmas, so "lives in Berlin" and "moved to Braga" set the same slot and the later one can
 * supersede the earlier (memory/relations.ts).
 */
export interface Slot {
  name: string;
  holds: "one" | "many";
  lasting: boolean;
  /** Verbs that set it ("live", "move"); `needs`: only with one of these words in the clause too. */
  verbs?: readonly string[];
  /** Nouns and adjectives that name it ("job", "vegetarian"). */
  words?: readonly string[];
  needs?: readonly string[];
  /** Its words all say the same thing of a person: search reads a question's word as any of them. */
  synonyms?: boolean;
  /**
   * The words a question about the slot asks with ("where do I work", "what do I drink"): a fact of
   * the slot is found by them though it says "joined Northwind" or "switched to green tea".
   */
  asked?: string;
}

export const SLOTS: readonly Slot[] = [
  // Who the user is: said as "I'm Ana", "my name is Ana" (extract/offline.ts nameSaid), never by a word.
  { name: "name", asked: "name called", holds: "one", lasting: true },
  {
    name: "home",
    asked: "home live",
    holds: "one",
    lasting: true,
    verbs: ["live", "move", "relocate", "reside"],
    words: ["live", "move", "relocate", "reside", "hometown"],
    synonyms: true,
  },
  {
    name: "work",
    asked: "work job",
    holds: "one",
    lasting: true,
    verbs: ["work", "hire", "promote"],
    words: ["work", "job", "career", "employer", "profession", "occupation", "hire", "promote"],
    synonyms: true,
  },
  {
    name: "education",
    asked: "school study",
    holds: "many",
    lasting: true,
    verbs: ["study", "major", "graduate", "enroll"],
    words: ["study", "major", "degree", "graduate", "university", "college", "enroll", "student"],
    synonyms: true,
  },
  {
    name: "relationship",
    asked: "partner married",
    holds: "one",
    lasting: true,
    verbs: ["marry", "divorce", "date"],
    words: [
      "married",
      "marry",
      "divorce",
      "divorced",
      "single",
      "boyfriend",
      "girlfriend",
      "husband",
      "wife",
      "partner",
      "fiance",
      "fiancee",
      "engaged",
    ],
    synonyms: true,
  },
  // Before pets: "allergic to cats" is health, not a cat.
  {
    name: "health",
    asked: "health allergic",
    holds: "many",
    lasting: true,
    words: [
      "allergic",
      "allergy",
      "asthma",
      "diabetes",
      "diabetic",
      "diagnose",
      "medication",
      "migraine",
      "injury",
      "intolerant",
      "intolerance",
    ],
  },
  {
    name: "pet",
    asked: "pet",
    holds: "many",
    lasting: true,
    words: ["dog", "cat", "pet", "puppy", "kitten", "hamster", "parrot"],
    synonyms: true,
  },
  {
    name: "children",
    asked: "children kids",
    holds: "many",
    lasting: true,
    words: ["kid", "child", "son", "daughter", "baby"],
    needs: ["have"],
    synonyms: true,
  },
  {
    name: "family",
    asked: "family",
    holds: "many",
    lasting: true,
    words: [
      "sister",
      "brother",
      "mother",
      "father",
      "mom",
      "dad",
      "parent",
      "sibling",
      "cousin",
      "aunt",
      "uncle",
    ],
    needs: ["have", "be"],
  },
  {
    name: "age",
    asked: "age old",
    holds: "one",
    lasting: true,
    words: ["old", "age", "birthday"],
    needs: ["year", "age", "turn"],
  },
  {
    name: "diet",
    asked: "diet eat",
    holds: "one",
    lasting: true,
    words: ["vegetarian", "vegan", "pescatarian", "meat", "gluten", "keto", "halal", "kosher"],
  },
  {
    name: "drink",
    asked: "drink",
    holds: "one",
    lasting: true,
    verbs: ["drink"],
    words: ["coffee", "tea", "espresso", "cortado", "latte", "cappuccino", "matcha"],
  },
  {
    name: "vehicle",
    asked: "vehicle car drive",
    holds: "one",
    lasting: true,
    verbs: ["drive", "ride"],
    words: ["car", "bike", "bicycle", "motorbike", "motorcycle", "scooter", "van", "truck", "vehicle"],
  },
  {
    name: "manager",
    asked: "manager boss",
    holds: "one",
    lasting: true,
    words: ["manager", "boss", "supervisor"],
    needs: ["be"],
  },
  {
    name: "identity",
    holds: "many",
    lasting: true,
    words: [
      "transgender",
      "trans",
      "gay",
      "lesbian",
      "bisexual",
      "queer",
      "nonbinary",
      "christian",
      "muslim",
      "jewish",
      "atheist",
      "introvert",
      "extrovert",
    ],
  },
  // A language one speaks or learns, named (readSlot): "speaks Portuguese", "learning Go".
  { name: "language", asked: "language speak", holds: "many", lasting: true, words: ["language"] },
  // When something recurs ("the standup is on Mondays", "moved to Tuesdays"): read by its weekday (readSlot).
  { name: "schedule", asked: "schedule when", holds: "one", lasting: true },
];

const BY_WORD = new Map<string, Slot>();
for (const slot of SLOTS)
  for (const w of [...(slot.verbs ?? []), ...(slot.words ?? [])]) BY_WORD.set(w, slot);

/** The places in SLOTS (ascending) of the slots each word names, and of those each verb names: readSlot's look-ups. */
const NAMED_BY_WORD = new Map<string, number[]>();
const NAMED_BY_VERB = new Map<string, number[]>();
SLOTS.forEach((slot, i) => {
  for (const w of slot.words ?? []) NAMED_BY_WORD.set(w, [...(NAMED_BY_WORD.get(w) ?? []), i]);
  for (const v of slot.verbs ?? []) NAMED_BY_VERB.set(v, [...(NAMED_BY_VERB.get(v) ?? []), i]);
});

/**
 * Verbs that tell a change as an event: the old value ends ("sold the Clio", "left Lumen Labs",
 * "quit smoking") or a new one is set ("bought an electric bike", "joined Northwind", "switched to
 * green tea"). An ending names the value it ends; a setting takes the slot of its object.
 */
const ENDS = new Set(["sell", "leave", "quit", "stop", "cancel", "divorce", "retire"]);
const SETS = new Set(["buy", "join", "move", "switch", "adopt", "become", "relocate", "marry"]);

const WEEKDAY = /^(?:mon|tues|wednes|thurs|fri|satur|sun)days?$|^(?:daily|weekly|fortnightly|biweekly)$/;
/** Verbs that say when something recurs, with a weekday. */
const SCHEDULE_VERBS = new Set(["be", "move", "shift", "meet", "happen", "run", "reschedule", "change"]);

/** Verbs whose object is a liked or disliked thing: one slot per thing ("likes_jazz"). */
const LIKES = new Set(["love", "like", "enjoy", "prefer", "adore", "fancy"]);
const DISLIKES = new Set(["hate", "dislike", "detest", "loathe"]);
const PLAN = new Set(["will", "gonna", "plan", "hope", "intend", "next", "soon", "upcoming", "tomorrow"]);
// Words that make a state recent, not lasting: "I have a concert tonight" is this week's news.
const RECENT = new Set(["recently", "lately", "currently", "now", "today", "tonight", "yesterday", "just"]);
// Words that make what one does a habit, lasting ("every Friday I play padel", "usually runs").
const HABIT =
  /^(?:usually|always|often|regularly|normally|daily|weekly|(?:mon|tues|wednes|thurs|fri|satur|sun)days)$/;
const PERIOD =
  /^(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|morning|evening|night|afternoon|weekend|day|week|month)$/;
const STATE = new Set([
  "be",
  "have",
  "own",
  "believe",
  "know",
  "value",
  "need",
  "live",
  "work",
  "belong",
  "drive",
  "drink",
  "speak",
]);

/** What a clause says, by the table: its slot, value, polarity and whether it is lasting. */
export interface SlotReading {
  /** The slot (or a thing liked: "likes_jazz", a favourite: "favorite_book"); null: an event or open fact. */
  slot: string | null;
  holds: "one" | "many";
  isStatic: boolean;
  value: string | null;
  polarity: Polarity;
  /** The clause tells a change as an event: it ends the value it names, or sets a new one. */
  change: "ends" | "sets" | null;
  /** The slot was named by the clause's verb ("lives", "works", "drinks"), not only by a word in it. */
  byVerb: boolean;
}

/** Present tense (or base form) of a verb: its value is its lemma, or lemma + s. */
function isPresent(t: Token): boolean {
  return (
    t.lower === t.lemma ||
    t.lower === `${t.lemma}s` ||
    t.lower === `${t.lemma}es` ||
    /^(am|is|are|'m|'re|'s|’m|’re|’s|i'm|i’m)$/.test(t.lower)
  );
}

const NOMINAL = /^(ADJ|NOUN|PROPN|NUM)$/;
const VALUE_STOP =
  /^(every|each|on|at|in|for|since|before|after|near|with|because|when|while|last|next|this)$/;

/**
 * The value a clause gives its slot: the noun group after `from` (its determiners and possessives
 * left out: "a 2015 Renault Clio" -> "2015 Renault Clio"), up to a preposition, a comma or the end.
 */
export function valueAfter(tokens: readonly Token[], from: number): string | null {
  let i = from;
  while (
    tokens[i] &&
    (tokens[i]!.pos === "DET" ||
      tokens[i]!.pos === "ADP" ||
      tokens[i]!.pos === "PRON" ||
      tokens[i]!.pos === "PART")
  )
    i++;
  const words: string[] = [];
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (VALUE_STOP.test(t.lower) && words.length > 0) break;
    // A capitalised word is a name whatever the tagger says ("learning Go").
    const capitalised = i > 0 && t.pos !== "PRON" && /^\p{Lu}/u.test(t.value);
    if (
      NOMINAL.test(t.pos) ||
      capitalised ||
      (t.value === "-" && words.length > 0) ||
      (t.pos === "VERB" && /ing$/.test(t.lower) && words.length === 0)
    )
      words.push(t.value);
    else if (words.length > 0) break;
  }
  return words.length > 0 ? words.join(" ").replace(/ - /g, "-") : null;
}

/** "I'm" as one token (the tagger reads it as a name): the clause's "be". */
const I_AM = /^i['’]m$/;

/** The first verb, or an auxiliary that is the clause's verb ("is vegetarian", "I'm"), and its index. */
function mainVerb(tokens: readonly Token[]): number {
  const verb = tokens.findIndex((t) => t.pos === "VERB");
  if (verb >= 0) return verb;
  return tokens.findIndex(
    (t) =>
      (t.pos === "AUX" && !/^(will|would|should|can|could|might|may|must|do)$/.test(t.lemma)) ||
      I_AM.test(t.lower),
  );
}

/**
 * A role at an organisation ("I'm a software engineer at Feedzai", "she's a nurse for the NHS"):
 * the index of the organisation's name after "at" or "for", else -1.
 */
function roleAt(tokens: readonly Token[], verbAt: number): number {
  const verb = tokens[verbAt];
  if (verb === undefined || (verb.lemma !== "be" && !I_AM.test(verb.lower))) return -1;
  if (!/^(a|an)$/.test(tokens[verbAt + 1]?.lower ?? "")) return -1;
  for (let i = verbAt + 2; i < tokens.length && i <= verbAt + 6; i++) {
    const t = tokens[i]!;
    if (/^(at|for)$/.test(t.lower)) {
      const name = tokens[i + 1]?.lower === "the" ? i + 2 : i + 1;
      return /^\p{Lu}/u.test(tokens[name]?.value ?? "") && tokens[i - 1]?.pos === "NOUN" ? name : -1;
    }
    if (!/^(ADJ|NOUN|PROPN)$/.test(t.pos)) return -1;
  }
  return -1;
}

const NEGATION = /^(not|n't|n’t|never|no)$/;

/** Personal pronouns: the subject said before a verb is a person. */
const PERSONAL = /^(i|we|you|he|she|they)$/;

/** Whether the verb at `verbAt` ("work") is followed by where or as what: as, at, for or in a noun. */
function worksWhere(tokens: readonly Token[], verbAt: number): boolean {
  let i = verbAt + 1;
  while (tokens[i]?.pos === "ADV" || tokens[i]?.pos === "ADJ") i++;
  if (!/^(as|at|for|in)$/.test(tokens[i]?.lower ?? "")) return false;
  i++;
  while (tokens[i]?.pos === "DET" || tokens[i]?.pos === "ADJ") i++;
  return tokens[i]?.pos === "NOUN" || tokens[i]?.pos === "PROPN";
}

/** The verb's object: the words after it up to the first conjunction or punctuation. */
function objectOf(tokens: readonly Token[], verbAt: number): readonly Token[] {
  const end = tokens.findIndex((t, i) => i > verbAt && (t.pos === "CCONJ" || t.pos === "PUNCT"));
  return tokens.slice(verbAt + 1, end < 0 ? undefined : end);
}

/**
 * The first slot (in SLOTS' order) a word of the clause names, or its verb as a verb ("emotionally-
 * driven" is no driving), whose needed words the clause has.
 */
function firstNamed(tokens: readonly Token[], lemmas: ReadonlySet<string>): Slot | undefined {
  const places = new Set<number>();
  for (const t of tokens) {
    for (const i of NAMED_BY_WORD.get(t.lemma) ?? []) places.add(i);
    if (t.pos === "VERB") for (const i of NAMED_BY_VERB.get(t.lemma) ?? []) places.add(i);
  }
  for (const i of [...places].sort((a, b) => a - b)) {
    const slot = SLOTS[i]!;
    if (!slot.needs || slot.needs.some((n) => lemmas.has(n))) return slot;
  }
  return undefined;
}

/**
 * Reads a clause against the table. `tokens` are the clause's, dates left out; `hasDate`: it names
 * a day (an event then, unless it sets a lasting slot by a change verb).
 */
export function readSlot(tokens: readonly Token[], hasDate: boolean, noLonger: boolean): SlotReading {
  const lemmas = tokens.map((t) => t.lemma);
  const lemmaSet = new Set(lemmas);
  const verbAt = mainVerb(tokens);
  const verb = verbAt >= 0 ? tokens[verbAt]! : undefined;
  const planned =
    lemmas.some((l) => PLAN.has(l)) ||
    tokens.some((t, i) => t.lemma === "go" && tokens[i + 1]?.lower === "to" && tokens[i + 2]?.pos === "VERB");
  const negated = tokens.slice(0, verbAt + 1).some((t) => NEGATION.test(t.lower) || t.negated);
  const polarity: Polarity = noLonger ? "no_longer" : "is";
  // A change is told by its verb said outright: "wants to move", "should join" or "never quit" tell none.
  const told =
    verb !== undefined &&
    !negated &&
    !/^(to|will|would|should|can|could|might|may|must|gonna|wanna|ca|wo)$/.test(
      tokens[verbAt - 1]?.lower ?? "",
    );
  const change = !told ? null : ENDS.has(verb.lemma) ? "ends" : SETS.has(verb.lemma) ? "sets" : null;
  const value = verbAt >= 0 ? valueAfter(tokens, verbAt + 1) : null;
  const reading = (
    slot: string | null,
    holds: "one" | "many",
    isStatic: boolean,
    v = value,
    byVerb = false,
  ): SlotReading => ({
    slot,
    holds,
    isStatic,
    value: v,
    polarity: change === "ends" ? "no_longer" : polarity,
    change,
    byVerb,
  });

  // "my favourite programming language is TypeScript": one slot per kind of favourite (the last
  // noun before "is"), its value what follows "is".
  const fav = tokens.findIndex((t) => t.lemma === "favorite" || t.lemma === "favourite");
  if (fav >= 0) {
    const is = tokens.findIndex((t, i) => i > fav && t.lemma === "be");
    const kind = tokens.slice(fav + 1, is >= 0 ? is : undefined);
    const noun = kind.findLast((t) => t.pos === "NOUN") ?? kind.find((t) => t.pos === "NOUN");
    return reading(
      noun ? `favorite_${noun.lemma}` : "favorite",
      "one",
      !planned,
      is >= 0 ? valueAfter(tokens, is + 1) : value,
      true,
    );
  }
  // A thing that recurs on a weekday ("the standup is on Mondays", "the demo moved to Thursdays"):
  // its schedule, whatever else the clause's words name ("moved" is no new home here).
  const weekday = tokens.findIndex((t) => WEEKDAY.test(t.lower));
  // Someone who runs on Saturdays runs, a habit ("I run 5k every Saturday"): a standup runs on a day.
  const runs = verb?.lemma === "run" && PERSONAL.test(tokens[verbAt - 1]?.lower ?? "");
  if (weekday >= 0 && verb !== undefined && SCHEDULE_VERBS.has(verb.lemma) && !runs)
    return reading("schedule", "one", !planned, valueAfter(tokens, weekday), true);
  // Joining an organisation ("joined Northwind as a design lead") is work; a club or a forum is not.
  if (
    verb?.lemma === "join" &&
    (tokens[verbAt + 1]?.pos === "PROPN" || tokens.some((t, i) => i > verbAt && t.lower === "as"))
  )
    return reading("work", "one", !planned, value, true);
  // A language spoken or learned is named ("speaks Portuguese"); "speaking of which" names none.
  if (
    verb !== undefined &&
    (verb.lemma === "speak" || verb.lemma === "learn") &&
    /^\p{Lu}/u.test(tokens[verbAt + 1]?.value ?? "")
  )
    return reading("language", "many", !planned, tokens[verbAt + 1]!.value, true);
  // A role at an organisation is work ("a software engineer at Feedzai"), a student's is study.
  const org = roleAt(tokens, verbAt);
  if (org >= 0) {
    const student = tokens.slice(verbAt + 1, org).some((t) => t.lemma === "student");
    return reading(
      student ? "education" : "work",
      student ? "many" : "one",
      !planned,
      valueAfter(tokens, org),
      true,
    );
  }
  // Working on something is what one does now, not one's work ("working on the Atlas migration").
  if (verb?.lemma === "work" && tokens[verbAt + 1]?.lower === "on") return reading(null, "many", false);
  // The verb's slot first ("drinks a cortado before work" is a drink), then one a word names.
  const verbSlot = verb === undefined ? undefined : NAMED_BY_VERB.get(verb.lemma)?.[0];
  const byVerb = verbSlot === undefined ? undefined : SLOTS[verbSlot];
  // A change names its slot in its object ("sold the Yaris and now cycle to work" ends no work).
  // Working is one's work only where one works ("as a nurse", "at Google", "for the NHS", "in
  // finance"): working from home, late on Tuesdays or with Rui is how one works, and ends no job.
  const howOneWorks = verb?.lemma === "work" && !worksWhere(tokens, verbAt);
  const named = howOneWorks
    ? undefined
    : (byVerb ?? firstNamed(change ? objectOf(tokens, verbAt) : tokens, lemmaSet));
  if (named) {
    // A lasting slot told as a change ("moved to Braga", "bought a bike") is its new value.
    return reading(
      named.name,
      named.holds,
      !planned && (named.lasting || change === "sets"),
      value,
      byVerb !== undefined,
    );
  }
  // A liking said anywhere in the clause ("Besides writing, Joanna also enjoys reading").
  const likeAt = tokens.findIndex(
    (t) => t.pos === "VERB" && (LIKES.has(t.lemma) || DISLIKES.has(t.lemma)) && isPresent(t),
  );
  const like = likeAt >= 0 ? tokens[likeAt] : undefined;
  if (like && !hasDate && !planned) {
    // "loves painting" / "doesn't like running": one slot per liked thing, negation included; the
    // thing is its noun group's head ("early morning meetings" -> meeting).
    const after = tokens.slice(likeAt + 1);
    const first = after.findIndex((t) => t.pos === "NOUN" || t.pos === "PROPN" || t.pos === "VERB");
    let head = first;
    while (head >= 0 && (after[head + 1]?.pos === "NOUN" || after[head + 1]?.pos === "PROPN")) head++;
    const object = head >= 0 ? after[head] : undefined;
    const kind = DISLIKES.has(like.lemma) || negated ? "dislikes" : "likes";
    return reading(object ? `${kind}_${object.lemma}` : null, "one", true);
  }
  if (planned || hasDate || lemmas.some((l) => RECENT.has(l))) return reading(null, "many", false);
  // Lasting by its finite verb, the first one said ("are excited" is a state of the moment).
  const finite = tokens.find(
    (t) =>
      t.pos === "VERB" ||
      (t.pos === "AUX" && !/^(will|would|should|can|could|might|may|must|do)$/.test(t.lemma)) ||
      I_AM.test(t.lower),
  );
  const finiteLemma = finite !== undefined && I_AM.test(finite.lower) ? "be" : finite?.lemma;
  const habit = tokens.some(
    (t, i) =>
      HABIT.test(t.lower) || (/^(every|each)$/.test(t.lower) && PERIOD.test(tokens[i + 1]?.lemma ?? "")),
  );
  const isStatic =
    finite !== undefined && (STATE.has(finiteLemma!) || habit) && isPresent(finite) && !lemmaSet.has("feel");
  return reading(null, "many", isStatic);
}

/** Whether the slot holds one value at a time (a new value of the same subject replaces the old). */
export function holdsOne(slot: string): boolean {
  if (slot.startsWith("favorite") || slot.startsWith("likes_") || slot.startsWith("dislikes_")) return true;
  return SLOTS.find((s) => s.name === slot)?.holds === "one";
}

/** The slot a word names ("husband" -> relationship, "son" -> children), or null. */
export const slotOfWord = (lemma: string): string | null => BY_WORD.get(lemma)?.name ?? null;

/** The word sets of the slots whose words say the same thing (search reads a question's word as any of them). */
export function attributeWordSets(): { attribute: string; lemmas: readonly string[] }[] {
  return SLOTS.filter((s) => s.synonyms).map((s) => ({ attribute: s.name, lemmas: s.words ?? [] }));
}

/**
 * The slots a question's words ask about: a word a slot is asked with, or one of its words or
 * verbs ("where do I work?" asks work, "what do I drink?" drink, "how old am I?" age).
 */
export function slotsAsked(words: readonly string[]): Set<string> {
  const asked = new Set<string>();
  for (const word of words) {
    const singular = word.replace(/s$/, "");
    for (const slot of SLOTS) {
      const names = [...(slot.asked?.split(" ") ?? []), ...(slot.words ?? []), ...(slot.verbs ?? [])];
      if (names.includes(word) || names.includes(singular)) asked.add(slot.name);
    }
  }
  return asked;
}

/** The words a question about a slot asks with (Slot.asked), or "" for a slot without them. */
export function askedWords(slot: string | null): string {
  return slot === null ? "" : (SLOTS.find((s) => s.name === slot)?.asked ?? "");
}
