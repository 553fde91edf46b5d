import * as chrono from "chrono-node";

/** A document date as a calendar day (UTC), the reference for relative dates in its content. */
export interface DayRef {
  instant: Date;
  year: number;
  month: number; // 1-12
  day: number;
}

/** A relative date expression in a sentence, rewritten against the document date. */
export interface DateSpan {
  start: number;
  end: number;
  /** Absolute wording that replaces the expression ("on 7 May 2023", "the week before 9 June 2023"). */
  replacement: string;
  /** YYYY-MM-DD the expression points at (first day of a month or year when only those are known). */
  date: string;
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** Parses `YYYY-MM-DD` or an ISO timestamp; a timestamp without offset is read as UTC. */
export function parseDocumentDate(value: string | null | undefined): DayRef | null {
  if (!value) return null;
  const text = value.trim();
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(text)
    ? `${text}T12:00:00Z`
    : /[zZ]|[+-]\d{2}:?\d{2}$/.test(text)
      ? text
      : `${text}Z`;
  const instant = new Date(iso);
  if (Number.isNaN(instant.getTime())) return null;
  return {
    instant,
    year: instant.getUTCFullYear(),
    month: instant.getUTCMonth() + 1,
    day: instant.getUTCDate(),
  };
}

export function formatDay(year: number, month: number, day: number): string {
  return `${day} ${MONTHS[month - 1]} ${year}`;
}

function isoDay(year: number, month: number, day: number): string {
  return `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

// Expressions chrono reads as a point although they name a span; worded like people date them.
const WEEK = /^(?:last|past|previous|this past) week$/i;
const NEXT_WEEK = /^next week$/i;
const WEEKEND = /^(?:last|past|this past) weekend$/i;
const NEXT_WEEKEND = /^(?:next|this|this coming) weekend$/i;
const MONTH_OR_YEAR = /\b(?:month|year)s?\b/i;
const AGO_YEARS = /\byears? ago\b/i;
const EXPLICIT = /\b(?:19|20)\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/i;

/**
 * Finds relative date expressions ("yesterday", "last week", "two days ago", "last Friday",
 * "next month") and words them absolutely against the document date. Explicit dates stay as
 * written but still give the fact its date.
 */
export function resolveDates(sentence: string, ref: DayRef): DateSpan[] {
  const spans: DateSpan[] = [];
  // chrono is the costly part of extraction; most sentences have no date word at all.
  if (!DATE_CUE.test(sentence)) return spans;
  const refText = formatDay(ref.year, ref.month, ref.day);
  for (const r of chrono.parse(sentence, { instant: ref.instant, timezone: 0 })) {
    const c = r.start;
    const year = c.get("year");
    const month = c.get("month");
    const day = c.get("day");
    if (year === null || month === null || day === null) continue;
    const text = r.text.trim();
    const lower = text.toLowerCase();
    // "now" is the document date itself, and "for 4 years" a duration: neither is a date.
    if (/^(?:right |just )?now$/.test(lower) || /^for\b/.test(lower)) continue;
    // "every Sunday", "each morning": a habit, not a day.
    if (/\b(?:every|each)\s+(?:other\s+)?$/i.test(sentence.slice(0, r.index))) continue;
    const date = isoDay(year, month, day);
    let replacement: string;
    if (EXPLICIT.test(text) && !/\b(?:last|next|ago|this)\b/i.test(text)) {
      // Explicit dates stay as written, completed with the year when it was implied.
      replacement = c.isCertain("year") || !c.isCertain("day") ? text : formatDay(year, month, day);
      if (/^on\b/i.test(text) && replacement !== text) replacement = `on ${replacement}`;
    } else if (!c.isCertain("day") && !c.isCertain("weekday") && c.isCertain("year")) {
      if (c.isCertain("month")) replacement = `in ${MONTHS[month - 1]} ${year}`;
      else if (AGO_YEARS.test(lower)) replacement = `${text} (around ${year})`;
      else replacement = `in ${year}`;
      const first = c.isCertain("month") ? isoDay(year, month, 1) : isoDay(year, 1, 1);
      spans.push({ start: r.index, end: r.index + r.text.length, replacement, date: first });
      continue;
    } else if (WEEK.test(lower)) {
      replacement = `the week before ${refText}`;
    } else if (NEXT_WEEK.test(lower)) {
      replacement = `the week after ${refText}`;
    } else if (WEEKEND.test(lower)) {
      replacement = `the weekend before ${refText}`;
    } else if (NEXT_WEEKEND.test(lower)) {
      replacement = `the weekend after ${refText}`;
    } else if (MONTH_OR_YEAR.test(lower) && !c.isCertain("day")) {
      spans.push({
        start: r.index,
        end: r.index + r.text.length,
        replacement: `in ${MONTHS[month - 1]} ${year}`,
        date: isoDay(year, month, 1),
      });
      continue;
    } else if (/\bweeks? ago\b/i.test(lower)) {
      replacement = `${text} (around ${formatDay(year, month, day)})`;
    } else if (c.isCertain("weekday") && !c.isCertain("day")) {
      // "last Friday": worded relative to the document date, which is how it is usually asked.
      const weekday = WEEKDAYS[c.get("weekday") ?? 0];
      const past = Date.UTC(year, month - 1, day) < Date.UTC(ref.year, ref.month - 1, ref.day);
      replacement = past
        ? `the ${weekday} before ${refText}`
        : `on ${weekday}, ${formatDay(year, month, day)}`;
    } else if (c.isCertain("day")) {
      replacement = `on ${formatDay(year, month, day)}`;
    } else {
      continue;
    }
    // "this past weekend": chrono leaves out "this".
    const start =
      /^(?:past|last)\b/i.test(text) && /\bthis\s+$/i.test(sentence.slice(0, r.index))
        ? sentence.slice(0, r.index).search(/\bthis\s+$/i)
        : r.index;
    spans.push({ start, end: r.index + r.text.length, replacement, date });
  }
  for (const m of sentence.matchAll(SEASON)) {
    // chrono has no seasons: "last summer" is the latest one that ended before the document date.
    const season = m[2]!.toLowerCase() as keyof typeof SEASON_END;
    const ends = SEASON_END[season];
    const next = m[1]!.toLowerCase() === "next" || m[1]!.toLowerCase() === "this coming";
    let year = ref.month > ends ? ref.year : ref.year - 1;
    if (next) year = ref.month < ends - 2 ? ref.year : ref.year + 1;
    const name = season === "fall" ? "autumn" : season;
    spans.push({
      start: m.index,
      end: m.index + m[0].length,
      replacement: `in the ${name} of ${year}`,
      date: isoDay(year, ends - 2, 1),
    });
  }
  return spans.sort((a, b) => a.start - b.start);
}

const DATE_CUE =
  /\d|\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this|past|week|weekend|month|year|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|noon|midnight|morning|evening|night)/i;
const SEASON = /\b(last|past|next|this coming) (summer|winter|spring|fall|autumn)\b/gi;
// Last month of each season (northern hemisphere); winter ends in February of the next year (14).
const SEASON_END = { spring: 5, summer: 8, fall: 11, autumn: 11, winter: 14 } as const;
