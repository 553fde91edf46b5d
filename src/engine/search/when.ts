import type { ParsedComponents } from "chrono-node";
import type * as Chrono from "chrono-node/en";

/**
 * Dates and windows a question asks about: "What did she do in August 2023?", "last spring",
 * "in 2022", "on 7 May 2023", "between March and June 2023". Memories whose event date falls
 * inside rank higher (a question about August is rarely answered by a July event); nothing is
 * dropped, since the window is a hint and an undated memory may still answer.
 */

let parser: Promise<typeof Chrono> | undefined;
/**
 * chrono-node's English parser, loaded when a question first names a date, not at start. English
 * only: the package root loads its 15 other languages too (~250 ms), and its parse is this one's.
 */
export const dateParser = () => {
  parser ??= import("chrono-node/en");
  return parser;
};

/** A closed range of days, YYYY-MM-DD. */
export interface Window {
  from: string;
  to: string;
}

/** How much a hit dated inside the window gains: similarity + boost * (1 - similarity). */
export const WINDOW_BOOST = 0.25;

const MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec";
// A date word must be in the question: chrono alone reads "may" (could) and "sun" as dates.
const CUE = new RegExp(
  `\\b(?:(?:19|20)\\d{2}|(?:${MONTHS})[a-z]*\\.? ?\\d{0,2}|yesterday|last|this|past|ago|week|weekend|month|year|spring|summer|autumn|fall|winter)\\b`,
  "i",
);
const SEASON =
  /\b(last|this|past|next)?\s*(spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?((?:19|20)\d{2}))?\b/i;
// Last month of each season (northern hemisphere); winter ends in February of the next year (14).
const SEASON_END = { spring: 5, summer: 8, fall: 11, autumn: 11, winter: 14 } as const;

const iso = (y: number, m: number, d: number) => {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.toISOString().slice(0, 10);
};
const lastDay = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/** The window a date expression names, or null when it names none (or only a time of day). */
function windowOf(c: ParsedComponents, text: string, ref: Date): Window | null {
  const y = c.get("year");
  const m = c.get("month");
  const d = c.get("day");
  if (y === null || m === null || d === null) return null;
  const lower = text.toLowerCase();
  if (/\bweek\b/.test(lower)) {
    // "last week": the Monday-Sunday week chrono's day falls in.
    const t = Date.UTC(y, m - 1, d);
    const monday = t - ((new Date(t).getUTCDay() + 6) % 7) * 86_400_000;
    return {
      from: new Date(monday).toISOString().slice(0, 10),
      to: new Date(monday + 6 * 86_400_000).toISOString().slice(0, 10),
    };
  }
  if (c.isCertain("day") || c.isCertain("weekday")) return { from: iso(y, m, d), to: iso(y, m, d) };
  if (c.isCertain("month")) {
    // "in May" without a year: the last May up to the reference date.
    let year = y;
    if (
      !c.isCertain("year") &&
      !/\b(?:next|this)\b/.test(lower) &&
      iso(year, m, 1) > ref.toISOString().slice(0, 10)
    )
      year--;
    return { from: iso(year, m, 1), to: iso(year, m, lastDay(year, m)) };
  }
  if (c.isCertain("year") || /\byear\b/.test(lower)) return { from: iso(y, 1, 1), to: iso(y, 12, 31) };
  return null;
}

/**
 * The window a question asks about, relative to `ref` (now, or the namespace's latest document
 * date: "last spring" in a store of 2023's conversations is 2023's spring). Two dates ("between
 * March and June 2023") give the range from the first to the second; null when the question
 * names no date.
 */
export async function questionWindow(question: string, ref: Date): Promise<Window | null> {
  if (!CUE.test(question)) return null;
  const chrono = await dateParser();
  const windows: Window[] = [];
  const season = SEASON.exec(question);
  if (season) {
    const name = season[2]!.toLowerCase() as keyof typeof SEASON_END;
    const ends = SEASON_END[name];
    const refYear = ref.getUTCFullYear();
    const refMonth = ref.getUTCMonth() + 1;
    let year: number;
    if (season[3]) year = Number(season[3]);
    else if (season[1]?.toLowerCase() === "next") year = refMonth < ends - 2 ? refYear : refYear + 1;
    else if (season[1]?.toLowerCase() === "this") year = ends > 12 && refMonth <= 2 ? refYear - 1 : refYear;
    else year = refMonth > ends ? refYear : refYear - 1;
    const startMonth = ends - 2;
    const end = ends > 12 ? { y: year + 1, m: ends - 12 } : { y: year, m: ends };
    windows.push({ from: iso(year, startMonth, 1), to: iso(end.y, end.m, lastDay(end.y, end.m)) });
  }
  for (const r of chrono.parse(question, { instant: ref, timezone: 0 })) {
    // "may", "sun", "sat" in lower case are words, not dates.
    const said = r.text.trim();
    if (said === said.toLowerCase() && /^(?:sun|sat|mon|wed|may|mar)$/.test(said)) continue;
    const w = windowOf(r.start, r.text, ref);
    if (w) windows.push(w);
    if (r.end) {
      const e = windowOf(r.end, r.text, ref);
      if (e) windows.push(e);
    }
  }
  // A year alone ("in 2022"), which chrono leaves out.
  if (windows.length === 0)
    for (const m of question.matchAll(/\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b/gi))
      windows.push({ from: `${m[1]}-01-01`, to: `${m[1]}-12-31` });
  if (windows.length === 0) return null;
  return {
    from: windows.reduce((a, w) => (w.from < a ? w.from : a), windows[0]!.from),
    to: windows.reduce((a, w) => (w.to > a ? w.to : a), windows[0]!.to),
  };
}

/** Whether a YYYY-MM-DD (or ISO timestamp) date falls inside the window. */
export function inWindow(date: string | null | undefined, w: Window): boolean {
  if (!date) return false;
  const day = date.slice(0, 10);
  return day >= w.from && day <= w.to;
}

/**
 * Raises hits dated inside the window (memories by their event date) and restores the order;
 * hits outside, and undated ones, keep their similarity. Chunks are not dated by their document's
 * day: what a conversation tells often happened before it (LoCoMo chunks-only at 3000 characters
 * went 0.756 -> 0.755 in one store and 0.747 -> 0.744 with a store per conversation when they were).
 */
export function boostWindow<T extends { scored: { similarity: number }; date: string | null }>(
  items: readonly T[],
  w: Window | null,
): T[] {
  if (w === null) return [...items];
  return items
    .map((i) =>
      inWindow(i.date, w)
        ? {
            ...i,
            scored: {
              ...i.scored,
              similarity: i.scored.similarity + WINDOW_BOOST * (1 - i.scored.similarity),
            },
          }
        : i,
    )
    .sort((a, b) => b.scored.similarity - a.scored.similarity);
}

/**
 * "When does the pipeline run?", "what time do we meet?", "how often does the cat get medication?":
 * a question about when something recurs ("when is the next appointment?" asks a date).
 */
const ASKS_WHEN = /^\s*(?:when (?:do|does)|(?:at )?what time|how often)\b/i;
/** A time of day or a recurrence a text states: "at 02:00", "9 am", "every night", "on Mondays". */
const STATES_WHEN =
  /\b(?:\d{1,2}:\d{2}|\d{1,2}\s?(?:am|pm)|every (?:night|day|morning|evening|hour|week|month|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|on (?:mon|tues|wednes|thurs|fri|satur|sun)days)\b/i;

/**
 * How much a hit stating a time gains when a question asks when something recurs: more than a
 * window's, since such a question's answer must state one, and often shares no other word with it
 * than its subject's name ("when does the Atlas pipeline run?" and "every night at 02:00 UTC the
 * ingest DAG picks up ...").
 */
export const STATED_TIME_BOOST = 0.5;

/**
 * A question about when something recurs ranks the hits that state a time of day or a recurrence
 * higher. A calendar date is no such answer (boostWindow weighs those).
 */
export function boostStatedTimes<T extends { scored: { similarity: number }; text: string }>(
  items: readonly T[],
  question: string,
): T[] {
  if (!ASKS_WHEN.test(question) || !items.some((i) => STATES_WHEN.test(i.text))) return [...items];
  return items
    .map((i) =>
      STATES_WHEN.test(i.text)
        ? {
            ...i,
            scored: {
              ...i.scored,
              similarity: i.scored.similarity + STATED_TIME_BOOST * (1 - i.scored.similarity),
            },
          }
        : i,
    )
    .sort((a, b) => b.scored.similarity - a.scored.similarity);
}
