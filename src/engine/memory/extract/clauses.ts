import { afterOpeningTime } from "./markers.js";
import type { Sentence, Token } from "./nlp.js";

/**
 * A sentence's clauses, each one fact. Facts told together are split where a new clause starts
 * after "and", "but", "whereas", "while" or ";": "My favourite language is Python, and I'm learning
 * Rust" is two facts (forgetting one must not take the other), "I sold the Clio and bought an
 * electric bike" too, the second with the first one's subject ("I bought an electric bike"). What
 * belongs together stays: a list ("a dog named Max"), a clause that points back ("and it was
 * great"), a noun group that only looks like a clause ("a failed run between 22:00 and 23:00").
 */

/** Words that join clauses: a clause may start after them. */
const JOINS = new Set(["and", "but", "whereas", "while"]);
/** Subjects that point back to the clause before: "... and it was great" is one fact. */
const ANAPHORIC = new Set(["it", "that", "this", "which", "there", "who", "so", "these", "those"]);
/** Words in a clause that point back at the one before: "... and my kids loved it". */
const POINTS_BACK = /^(it|that|this|these|those|there|them|then|too|also|either)$/;
/** Subjects that list one more thing rather than open a fact: "... and a dog named Max". */
const INDEFINITE = /^(a|an|some|any|one|two|three|many|few)\b/;
const FILLER = new Set(["yeah", "yes", "oh", "well", "so", "also", "actually", "anyway", "now", "then"]);

const isVerb = (t: Token | undefined) => t !== undefined && (t.pos === "VERB" || t.pos === "AUX");

/**
 * A verb the tagger read as a plural noun: an -s word after a name, before an article or
 * preposition ("Maya lives in").
 */
export function verbAsNoun(tokens: readonly Token[], k: number): boolean {
  const t = tokens[k]!;
  return (
    t.pos === "NOUN" &&
    /[a-z]s$/.test(t.value) &&
    tokens[k - 1]?.pos === "PROPN" &&
    /^(ADP|DET|PRON|NUM)$/.test(tokens[k + 1]?.pos ?? "")
  );
}

/** Where the clause's first verb is (-1: none). */
function verbAt(tokens: readonly Token[]): number {
  return tokens.findIndex((t, i) => isVerb(t) || verbAsNoun(tokens, i) || /^i['’]m$/.test(t.lower));
}

/** The words before a clause's first verb, lower-cased: its subject as written, or null. */
export function clauseSubject(tokens: readonly Token[]): string | null {
  const at = verbAt(tokens);
  if (at < 0) return null;
  if (/^i['’]m$/.test(tokens[at]!.lower)) return "i";
  if (at === 0) return null;
  const words = tokens
    .slice(afterOpeningTime(tokens.slice(0, at)), at)
    .filter((t) => !FILLER.has(t.lower) && t.pos !== "PUNCT" && t.pos !== "ADV" && t.pos !== "CCONJ");
  if (words.length === 0 || words.length > 5) return null;
  if (!words.every((t) => /^(DET|PRON|ADJ|NOUN|PROPN|NUM)$/.test(t.pos))) return null;
  return words.map((t) => t.lower).join(" ");
}

/** The tokens of a clause's subject (fillers left out), for the clause after it that leaves it unsaid. */
function subjectTokens(tokens: readonly Token[]): Token[] {
  const at = verbAt(tokens);
  if (at < 0) return [];
  if (/^i['’]m$/.test(tokens[at]!.lower))
    return [{ ...tokens[at]!, value: "I", lower: "i", lemma: "i", pos: "PRON" }];
  return tokens
    .slice(0, at)
    .filter((t) => !FILLER.has(t.lower) && t.pos !== "PUNCT" && t.pos !== "ADV" && t.pos !== "CCONJ");
}

/**
 * Whether the tokens are a clause of their own: a subject and a verb that is not a participle
 * inside a noun group ("A failed Dagster run between 22:00" has none).
 */
function isClause(tokens: readonly Token[]): boolean {
  const at = verbAt(tokens);
  if (at < 0) return false;
  if (/^i['’]m$/.test(tokens[at]!.lower)) return true;
  const before = tokens[at - 1];
  if (before?.pos === "DET" || before?.pos === "ADJ") return false;
  return clauseSubject(tokens) !== null;
}

/** The form of a finite verb: past, present third person (-s), or the lemma; null for any other. */
function form(t: Token, asVerb = false): "past" | "s" | "base" | null {
  // An -s word the tagger read as a noun after a name ("Inês lives in") is a present -s verb.
  if (asVerb) return "s";
  if (/ing$/.test(t.lower) || !(t.pos === "VERB" || t.pos === "AUX")) return null;
  if (t.lower === t.lemma) return "base";
  if (t.lower === `${t.lemma}s` || t.lower === `${t.lemma}es` || /^(is|has|does)$/.test(t.lower)) return "s";
  return "past";
}

/**
 * A clause that starts with its verb, its subject left unsaid ("... and bought an electric bike",
 * "... and works as an architect"): its verb has the form of the first clause's, which is one word
 * ("has worked hard and accomplished a lot", "should come down and join" share their helper: one fact).
 */
function opensWithVerb(right: readonly Token[], left: readonly Token[]): boolean {
  const first = right.find((t) => t.pos !== "ADV");
  if (first === undefined) return false;
  const at = verbAt(left);
  const leftVerb = left[at];
  if (leftVerb === undefined || /^i['’]m$/.test(leftVerb.lower)) return false;
  const next = left[at + 1];
  if (leftVerb.pos === "AUX" && next !== undefined && (next.pos === "VERB" || next.pos === "PART"))
    return false;
  const f = form(first);
  return f !== null && f === form(leftVerb, verbAsNoun(left, at));
}

/**
 * The clauses of a sentence (the sentence itself when it holds one). A clause of the same subject
 * as the one before (restated, or unsaid) is apart only when `apart` says the two are separate
 * facts (they set slots of their own): "went camping and saw a bear" stays one scene.
 */
export function splitClauses(
  sentence: Sentence,
  apart: (left: readonly Token[], right: readonly Token[], otherPerson?: boolean) => boolean = () => true,
): Sentence[] {
  const { tokens } = sentence;
  for (let k = 1; k < tokens.length - 1; k++) {
    const t = tokens[k]!;
    const semicolon = t.value === ";";
    if (!semicolon && !(JOINS.has(t.lower) && (t.pos === "CCONJ" || t.pos === "SCONJ" || t.pos === "ADP")))
      continue;
    let left = tokens.slice(0, k);
    if (left.at(-1)?.value === ",") left = left.slice(0, -1);
    let right = tokens.slice(k + 1);
    if (!isClause(left) || right.length < 2) continue;
    // "... the creativity and skill is awesome": two nouns joined are one subject, not two clauses.
    if (!semicolon && left.at(-1)?.pos === "NOUN" && right[0]?.pos === "NOUN") continue;
    let implied: Token[] = [];
    if (opensWithVerb(right, left)) {
      implied = subjectTokens(left);
      if (implied.length === 0 || !apart(left, right)) continue;
    } else {
      const second = clauseSubject(right);
      if (second === null || ANAPHORIC.has(second) || INDEFINITE.test(second)) continue;
      // "... and my kids loved it": a clause that points back at the first one is not true on its own.
      if (!semicolon && right.some((x) => POINTS_BACK.test(x.lower))) continue;
      // The same person again ("and I", "and we saw a bear"): one scene, unless two separate facts.
      // Someone else ("Sofia loves surfing, but I prefer running") is a fact of their own.
      const first = clauseSubject(left);
      const pronoun = (x: string | null) => x === null || /^(i|we|you|they|she|he|i['’]m)$/.test(x);
      const same = second === first || (pronoun(second) && pronoun(first));
      // Someone named, then "I" ("Sofia loves surfing, but I prefer running"): apart when either
      // clause says something lasting of its person; a story told on ("Mel came and we ate") stays.
      if (!semicolon && (same || pronoun(second)) && !apart(left, right, !same)) continue;
    }
    const part = (list: Token[], own: Token[] = list): Sentence => {
      const start = own[0]!.start;
      const end = own[own.length - 1]!.end;
      return {
        text: sentence.text.slice(start - sentence.start, end - sentence.start),
        start,
        end,
        tokens: list,
      };
    };
    const own = right;
    // The unsaid subject is the first clause's: its tokens lead the clause (the text and span are its own).
    if (implied.length > 0) right = [...implied.map((x) => ({ ...x, implied: true })), ...right];
    return [part(left), ...splitClauses(part(right, own), apart)];
  }
  return [sentence];
}
