import type { Token } from "./nlp.js";

/**
 * What a sentence is about: its subject key, an attribute key for update detection, and whether
 * it is a lasting (static) fact. Keys are lemma-based so "lives in Berlin" and "lives in Boston"
 * share subject and attribute, and the later one can supersede the earlier one.
 */
export interface FactKind {
  subject: string | null;
  attribute: string | null;
  isStatic: boolean;
}

/** Attributes whose facts are lasting (profile "static") even when told as an event. */
const RULES: { attribute: string; lemmas: Set<string>; needs?: Set<string> }[] = [
  { attribute: "home", lemmas: new Set(["live", "move", "relocate", "reside", "hometown"]) },
  {
    attribute: "work",
    lemmas: new Set(["work", "job", "career", "employer", "profession", "occupation", "hire", "promote"]),
  },
  {
    attribute: "education",
    lemmas: new Set(["study", "major", "degree", "graduate", "university", "college", "enroll"]),
  },
  {
    attribute: "relationship",
    lemmas: new Set([
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
    ]),
  },
  { attribute: "pet", lemmas: new Set(["dog", "cat", "pet", "puppy", "kitten", "hamster", "parrot"]) },
  {
    attribute: "children",
    lemmas: new Set(["kid", "child", "son", "daughter", "baby"]),
    needs: new Set(["have"]),
  },
  { attribute: "age", lemmas: new Set(["old", "age", "birthday"]), needs: new Set(["year", "age", "turn"]) },
  {
    attribute: "identity",
    lemmas: new Set([
      "transgender",
      "trans",
      "gay",
      "lesbian",
      "bisexual",
      "queer",
      "nonbinary",
      "vegan",
      "vegetarian",
      "christian",
      "muslim",
      "jewish",
      "atheist",
      "introvert",
      "extrovert",
    ]),
  },
];

/**
 * Attributes whose words all say the same thing of a person (where they live, their work, their
 * schooling, their partner, pets, children): a fact in one of the words answers a question in
 * another ("where does she live?" / "she moved to Braga"). Identity and age are not: their words
 * are different values ("vegan", "christian") or need the word beside them ("old").
 */
const SAME_MEANING = new Set(["home", "work", "education", "relationship", "pet", "children"]);

/** The lemma sets of SAME_MEANING's attributes (search expands a query's word to its set). */
export function attributeWordSets(): { attribute: string; lemmas: readonly string[] }[] {
  return RULES.filter((r) => SAME_MEANING.has(r.attribute)).map((r) => ({
    attribute: r.attribute,
    lemmas: [...r.lemmas],
  }));
}

const PREFERENCE = new Set(["love", "like", "enjoy", "prefer", "hate", "dislike", "adore", "fancy"]);
const STATE = new Set(["be", "have", "own", "believe", "know", "value", "need", "live", "work", "belong"]);
const PLAN = new Set(["will", "gonna", "plan", "hope", "intend", "next", "soon", "upcoming", "tomorrow"]);
// Words that make a state recent, not lasting: "I have a concert tonight" is this week's news.
const RECENT = new Set(["recently", "lately", "currently", "now", "today", "tonight", "yesterday", "just"]);
const NOMINAL = new Set(["NOUN", "PROPN", "PRON"]);

/** Present tense (or base form) of a verb: the value is its lemma, or lemma + s. */
function isPresent(t: Token): boolean {
  return (
    t.lower === t.lemma ||
    t.lower === `${t.lemma}s` ||
    t.lower === `${t.lemma}es` ||
    /^(am|is|are|'m|'re|'s)$/.test(t.lower)
  );
}

/**
 * Classifies one sentence. `owner` maps first- and second-person words to the speaker keys they
 * stand for ("i" -> "caroline", "you" -> "melanie").
 */
export function classify(tokens: Token[], owner: Map<string, string>, hasDate: boolean): FactKind {
  const subject = subjectOf(tokens, owner);
  const lemmas = tokens.map((t) => t.lemma);
  const lemmaSet = new Set(lemmas);
  const mainVerb = tokens.find(
    (t) =>
      t.pos === "VERB" ||
      (t.pos === "AUX" && !/^(will|would|should|can|could|might|may|must|do)$/.test(t.lemma)),
  );
  const planned =
    lemmas.some((l) => PLAN.has(l)) ||
    tokens.some((t, i) => t.lemma === "go" && tokens[i + 1]?.lower === "to" && tokens[i + 2]?.pos === "VERB");

  // favourite X: the attribute is the thing the favourite is of.
  const fav = tokens.findIndex((t) => t.lemma === "favorite" || t.lemma === "favourite");
  if (fav >= 0) {
    const noun = tokens.slice(fav + 1).find((t) => t.pos === "NOUN");
    return { subject, attribute: noun ? `favorite_${noun.lemma}` : "favorite", isStatic: !planned };
  }
  for (const rule of RULES) {
    if (!lemmas.some((l) => rule.lemmas.has(l))) continue;
    if (rule.needs && !lemmas.some((l) => rule.needs!.has(l))) continue;
    return { subject, attribute: rule.attribute, isStatic: !planned };
  }
  const pref = tokens.findIndex((t) => t.pos === "VERB" && PREFERENCE.has(t.lemma) && isPresent(t));
  if (pref >= 0 && !hasDate && !planned) {
    // "loves painting" / "doesn't like running": one attribute per liked thing, negation included.
    const object = tokens
      .slice(pref + 1)
      .find((t) => t.pos === "NOUN" || t.pos === "PROPN" || t.pos === "VERB");
    return { subject, attribute: object ? `likes_${object.lemma}` : null, isStatic: true };
  }
  if (planned || hasDate || lemmas.some((l) => RECENT.has(l)))
    return { subject, attribute: null, isStatic: false };
  const isStatic =
    mainVerb !== undefined && STATE.has(mainVerb.lemma) && isPresent(mainVerb) && !lemmaSet.has("feel");
  return { subject, attribute: null, isStatic };
}

/** The grammatical subject, approximated as the first nominal group before the first verb. */
function subjectOf(tokens: Token[], owner: Map<string, string>): string | null {
  for (let i = 0; i < tokens.length; i++) {
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
function compoundHead(tokens: Token[], at: number): number {
  const first = tokens[at]!;
  const second = tokens[at + 1];
  if (first.lower !== first.lemma || second?.pos !== "NOUN" || /s$/.test(second.lower)) return at;
  const next = tokens[at + 2]?.pos;
  return next === undefined || /^(AUX|VERB|ADP|PUNCT|PART)$/.test(next) ? at + 1 : at;
}
