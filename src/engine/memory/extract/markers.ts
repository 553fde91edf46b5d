import type { Token } from "./nlp.js";

/**
 * Words that carry no fact, as tables: small talk, light verbs, fillers, intensifiers, and the
 * discourse markers a sentence is told with ("by the way", "to be honest"). Extraction leaves them
 * out of a memory's words (extract/offline.ts).
 */

// Nouns that carry no fact: greetings, thanks, small talk.
export const SMALL_TALK = new Set([
  "thanks",
  "thank",
  "lol",
  "haha",
  "wow",
  "hey",
  "hi",
  "hello",
  "congrats",
  "congratulation",
  "bye",
  "luck",
  "care",
  "chat",
  "talk",
  "idea",
  "lot",
  "thing",
  "stuff",
  "way",
  "time",
  "day",
  "news",
  "word",
  "pleasure",
  "hug",
  "update",
  "question",
  "sound",
  "yeah",
  "yes",
  "omg",
  "bit",
  "kind",
  "sort",
  "look",
  "love",
]);
export const LIGHT_VERBS = new Set([
  "be",
  "have",
  "do",
  "get",
  "say",
  "know",
  "think",
  "see",
  "sound",
  "look",
  "seem",
  "let",
  "make",
  "feel",
  "hope",
  "mean",
  "guess",
  "thank",
  "hear",
  "tell",
  "wish",
  "appreciate",
  "care",
  "want",
  "keep",
  "glad",
  "catch",
]);
export const FILLER = new Set([
  "yeah",
  "yes",
  "oh",
  "well",
  "so",
  "and",
  "but",
  "also",
  "haha",
  "lol",
  "wow",
  "hey",
  "um",
  "ah",
  "ok",
  "okay",
  "btw",
  "anyway",
  "totally",
  "absolutely",
  "definitely",
  "sure",
  "actually",
]);
export const INTENSIFIERS = new Set([
  "really",
  "so",
  "super",
  "just",
  "pretty",
  "totally",
  "very",
  "actually",
  "truly",
  "absolutely",
  "definitely",
]);

/** Markers said around a fact, never part of it: at a sentence's start or end, with their comma. */
const MARKERS = [
  "by the way",
  "btw",
  "fyi",
  "just so you know",
  "for the record",
  "for what it's worth",
  "to be honest",
  "to be fair",
  "honestly",
  "fun fact",
  "as i said",
  "as you know",
  "as i mentioned",
  "you know what",
  "just saying",
  "in any case",
  "speaking of which",
  "anyway",
  "anyways",
  "nice to meet you",
  "good to meet you",
  "pleased to meet you",
];
const MARKER = MARKERS.map((m) => m.replace(/ /g, "\\s+").replace(/'/g, "['’]")).join("|");
const LEADING = new RegExp(`^\\s*(?:${MARKER})\\s*[,:;!.-]*\\s*`, "i");
const TRAILING = new RegExp(`[,;:-]?\\s*(?:${MARKER})\\s*(?=[.!?]*\\s*$)`, "i");

/** The spans of `text` (its own offsets) that are markers around the fact, to leave out of it. */
export function markerSpans(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  const lead = LEADING.exec(text);
  if (lead && lead[0].length < text.trim().length) spans.push({ start: 0, end: lead[0].length });
  const trail = TRAILING.exec(text);
  if (trail && trail.index > (spans[0]?.end ?? 0))
    spans.push({ start: trail.index, end: trail.index + trail[0].length });
  return spans;
}

/** Words that say when: days, parts of days, periods. */
export const WHEN =
  /^(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|mornings?|evenings?|nights?|afternoons?|weekends?|days?|weeks?|months?|years?|summers?|winters?)$/;

/**
 * Where a clause starts after the time it opens with ("Every night at 02:00 UTC the ingest DAG
 * picks up ...", "On Thursdays, we climb", "Every Friday I play padel"): the index of its first
 * word after it, 0 when it opens with none.
 */
export function afterOpeningTime(tokens: readonly Token[]): number {
  let i = 0;
  let said = false;
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (WHEN.test(t.lower) || /^\d{1,2}(?::\d{2})?$/.test(t.lower)) said = true;
    else if (!/^(every|each|on|at|in|during|this|last|next|,|utc|gmt|am|pm|a\.m\.|p\.m\.)$/.test(t.lower))
      break;
  }
  return said ? i : 0;
}
