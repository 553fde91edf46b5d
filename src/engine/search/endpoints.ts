/**
 * End points of a question about the time between two events: "How many weeks passed between
 * Zoe adopting Rex and Bella?", "How long after the move did she find a job?". The reader works
 * out the difference from the two dated events, so both must come back; a search for the whole
 * question ranks the turns that match most of its words (often only one of the two events, or
 * neither) first. Each end point is searched alone as well (search.ts), and the best similarity
 * of each hit is kept (mergeBest).
 */

/** The question asks for a duration or a count of time units. */
const DURATION = /\bhow\s+(?:long|much\s+time|many\s+(?:days|weeks|months|years|hours|nights))\b/i;
const AUX = "did|does|do|was|were|is|are|had|has|have|will|would|could";
/** "between X and Y", "from X to/until Y". */
const BETWEEN = /\bbetween\s+(.+?)\s+and\s+(.+?)\s*[?.!]*$/i;
const FROM_TO = /\bfrom\s+(.+?)\s+(?:to|until|till)\s+(.+?)\s*[?.!]*$/i;
/** "How long after X did Y", "How many days before X was Y". */
const CONNECTOR_FIRST = new RegExp(
  `\\b(?:after|before|since)\\s+(.+?)\\s+(?:${AUX})\\s+(.+?)\\s*[?.!]*$`,
  "i",
);
/** "How long did it take Y after X", "How many days was Y before X". */
const CONNECTOR_LAST = new RegExp(
  `^.*?\\bhow\\s+(?:long|much\\s+time|many\\s+\\w+)\\s+(?:${AUX})\\s+(.+?)\\s+(?:after|before|since)\\s+(.+?)\\s*[?.!]*$`,
  "i",
);

const words = (s: string) => s.split(/\s+/).filter((w) => w !== "");

/**
 * The second end point of "between Zoe adopting Rex and Bella" leaves out what it shares with the
 * first: a single word (or a run of capitalised ones, a name) takes the place of the first end
 * point's last words ("Zoe adopting Bella").
 */
function completed(first: string, second: string): string {
  const a = words(first);
  const b = words(second);
  const name = b.every((w) => /^[A-Z]/.test(w));
  if (b.length < a.length && (b.length === 1 || name))
    return [...a.slice(0, a.length - b.length), ...b].join(" ");
  return second;
}

/**
 * The sub-queries of a duration question with two end points (each end point, with the people
 * the question names elsewhere), or none. A question with one end point ("How long ago did Zoe
 * move?") needs none: the whole question finds it.
 */
export function endPointQueries(question: string): string[] {
  if (!DURATION.test(question)) return [];
  let ends: [string, string] | null = null;
  const between = BETWEEN.exec(question) ?? FROM_TO.exec(question);
  if (between) ends = [between[1]!, completed(between[1]!, between[2]!)];
  else {
    const first = CONNECTOR_FIRST.exec(question);
    const last = first ? null : CONNECTOR_LAST.exec(question);
    if (first) ends = [first[1]!, first[2]!];
    else if (last) ends = [last[1]!, last[2]!];
  }
  return ends ? subQueries(question, ends, between !== null) : [];
}

/**
 * The two events a question takes as the ends of a time span ("What did Zoe do between the trip
 * and the wedding?"): each searched alone dates the span, and what happened inside it ranks higher
 * (search.ts). None for a duration question (its end points are endPointQueries'), for two people
 * ("between John and Tim": a conversation, not a span) and for two dates (when.ts reads those).
 */
export function anchorQueries(question: string): string[] {
  if (DURATION.test(question)) return [];
  const between = BETWEEN.exec(question);
  if (!between) return [];
  // A span is asked about what happened or was done in it; "the difference between a latte and a
  // cappuccino" or "choose between tea and coffee" names two things, not two times.
  const before = question.slice(0, between.index);
  if (!HAPPENED.test(before) || COMPARED.test(before)) return [];
  const ends: [string, string] = [between[1]!, completed(between[1]!, between[2]!)];
  // "Between John and Tim", "between Zoe and her sister": people, not events.
  if (ends.some((e) => words(e).every((w) => /^[A-Z]/.test(w)))) return [];
  if (ends.some((e) => DATE_LIKE.test(e))) return [];
  return subQueries(question, ends, true);
}

/** What a question about a span asks: what happened, was done, or where someone was. */
const HAPPENED = /\b(?:did|do|does|done|happen(?:ed|s)?|was|were|went|had|has|have)\b/i;

/** Words that weigh two things against each other rather than ask what happened between them. */
const COMPARED =
  /\b(?:differen\w*|choose|chose|choos\w*|choice|decid\w*|pick\w*|compar\w*|relationship|link|connection|similar\w*|contrast|prefer\w*|more|less|better|worse)\b/i;

/**
 * A year, a day number, a month, a season or a relative day: an end point that is a date, not an
 * event (when.ts reads those). "Her 30th birthday" is left out with them: a missed span costs less
 * than a wrong one.
 */
const DATE_LIKE =
  /\b(?:(?:19|20)\d{2}|\d{1,2}(?:st|nd|rd|th)?|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|spring|summer|autumn|fall|winter|yesterday|today|now)\b/i;

/**
 * Each end point as a query, with the people the question names outside the end points (and, for
 * "after X did Y", the subject of a clause end point: "after the move did Zoe find a job": Zoe).
 */
function subQueries(question: string, ends: [string, string], between: boolean): string[] {
  const inside = new Set(ends.flatMap((e) => words(e)));
  const outside = words(question.replace(/[?.!,]/g, ""))
    .slice(1)
    .filter((w) => !inside.has(w));
  const subjects = between ? [] : ends.map((e) => words(e)[0] ?? "");
  const names = [
    ...new Set(
      [...outside, ...subjects].filter((w) => /^[A-Z][a-z]/.test(w)).map((w) => w.replace(/'s$/, "")),
    ),
  ];
  return ends.map((e) => {
    const own = new Set(words(e.replace(/[?.!,]/g, "")).map((w) => w.replace(/'s$/, "")));
    return [...names.filter((n) => !own.has(n)), e].join(" ");
  });
}

/**
 * Two ranked lists as one: each hit (by corpus and row) at the better of its two similarities,
 * best first.
 */
export function mergeBest<T extends { scored: { corpus: string; rowid: number; similarity: number } }>(
  a: readonly T[],
  b: readonly T[],
): T[] {
  const best = new Map<string, T>();
  for (const item of [...a, ...b]) {
    const key = `${item.scored.corpus}:${item.scored.rowid}`;
    const seen = best.get(key);
    if (!seen || seen.scored.similarity < item.scored.similarity) best.set(key, item);
  }
  return [...best.values()].sort((x, y) => y.scored.similarity - x.scored.similarity);
}
