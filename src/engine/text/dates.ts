// English only: the package root loads its 15 other languages too (~200 ms at start), and its
// parse is this casual English parser.
import * as chrono from "chrono-node/en";
import { HOLIDAY, holidayIn } from "./holidays.js";

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
  /** YYYY-MM-DD the expression points at (first day of a month or year when only those are known); null for a duration. */
  date: string | null;
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

// Expressions chrono reads as a point although they name a span.
const WEEK = /^(?:last|past|previous|this past) week$/i;
const NEXT_WEEK = /^next week$/i;
const WEEKEND = /^(?:last|past|this past) weekend$/i;
const NEXT_WEEKEND = /^(?:next|this|this coming) weekend$/i;
const MONTH_OR_YEAR = /\b(?:month|year)s?\b/i;
const EXPLICIT = /\b(?:19|20)\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/i;
// Weekday and month abbreviations that are also words ("the sun", "I sat down", "wed", "mar").
const WORDLIKE = /^(?:sun|sat|wed|mon|mar|may|jan|jun|dec|aug)\.?$/i;
// Words chrono does not know, with the form it does (same length or shorter): abbreviated
// weekdays, and "back" for "ago" ("two years back").
const CHRONO_FORMS: [RegExp, string][] = [
  [/\bTues\b/gi, "Tue"],
  [/\bWeds\b/gi, "Wed"],
  [/\bThurs?\b/gi, "Thu"],
  [/(?<=\b(?:days?|weeks?|months?|years?) )back\b/gi, "ago"],
];
// "the 11th": a day of the document's month, which chrono leaves alone without a month name.
const ORDINAL_DAY =
  /\b(?:on )?the (\d{1,2})(?:st|nd|rd|th)\b(?! (?:of )?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|century|floor|grade|time|place|row|anniversary|birthday))/gi;
// Durations reaching back from the document date: "for three years now", "after 3 years",
// "it's been two years", "seven years now".
const DURATION =
  /\b(?:(?:for|after|been) (?:the (?:past|last) )?)?(a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|\d{1,2}) (years?|months?)(?: now)?\b/gi;
const NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
};
// "the other day", "a few days ago", "a couple of days ago": a few days before the document date.
const FEW_DAYS = /\b(?:the other day|a (?:few|couple(?: of)?) days (?:ago|back))\b/gi;
// "in a few days", "in a couple of days": a few days after the document date.
const FEW_DAYS_AHEAD = /\bin a (?:few|couple(?: of)?) days\b/gi;
const LAST_NIGHT = /^last night$/i;
// Weeks and weekends counted back: "two weeks ago", "a few weeks ago", "a fortnight ago", "the week
// before last", "two weekends ago", "the weekend before last".
const WEEKS_BACK =
  /\b(?:(a|one|two|three|four|five|six|a couple(?: of)?|a few|\d) (weeks?|weekends?) (?:ago|back)|a fortnight (?:ago|back)|the (week|weekend) before last)\b/gi;
const COUNT: Record<string, number> = { "a couple": 2, "a couple of": 2, "a few": 3 };

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const DAY_MS = 86_400_000;
const dayOf = (t: number) => {
  const d = new Date(t);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
};
const noon = (ref: DayRef) => Date.UTC(ref.year, ref.month - 1, ref.day, 12);

/** "5-11 June 2023", "29 May-4 June 2023", "30 December 2022-5 January 2023". */
export function formatRange(from: number, to: number): string {
  const a = dayOf(from);
  const b = dayOf(to);
  if (a.year !== b.year) return `${formatDay(a.year, a.month, a.day)}-${formatDay(b.year, b.month, b.day)}`;
  if (a.month !== b.month) return `${a.day} ${MONTHS[a.month - 1]}-${formatDay(b.year, b.month, b.day)}`;
  return `${a.day}-${formatDay(b.year, b.month, b.day)}`;
}

/** Noon of the Monday of the document date's week (weeks run Monday to Sunday). */
function monday(ref: DayRef): number {
  const t = noon(ref);
  return t - ((new Date(t).getUTCDay() + 6) % 7) * DAY_MS;
}

const isoOf = (t: number) => {
  const d = dayOf(t);
  return isoDay(d.year, d.month, d.day);
};

/**
 * Finds date expressions in a sentence and dates them against the document date. The speaker's
 * words stay, with the absolute date or range beside them ("yesterday (7 May 2023)", "a few days
 * before 19 August 2023", "for three years now (since about 2020)"), so a reader sees both what was
 * said and when it was. A weekday, week or weekend also gets the wording people ask about it with,
 * relative to the document date ("last Sunday (11 June 2023, the Sunday before 14 June 2023)",
 * "last week (5-11 June 2023, the week before 14 June 2023)"): without it, LoCoMo's temporal
 * answers covered fell from 0.896 to 0.853. Explicit dates stay as written,
 * completed with the year when it was implied: the year that "last" / "next" / "this" or the
 * tense points to ("in January 2023", "last October (October 2022)"), holidays too ("at Christmas
 * (25 December 2022)"); a year alone ("in 2019") dates the sentence as said. A duration dates
 * nothing: its span has no `date`.
 */
export function resolveDates(sentence: string, ref: DayRef): DateSpan[] {
  const spans: DateSpan[] = [];
  // chrono is the costly part of extraction; most sentences have no date word at all.
  const chronoCue = DATE_CUE.test(sentence);
  if (!chronoCue && !OTHER_CUE.test(sentence)) return spans;
  const refText = formatDay(ref.year, ref.month, ref.day);
  const beside = (text: string, absolute: string) => `${text} (${absolute})`;
  const taken = (start: number, end: number) => spans.some((s) => start < s.end && s.start < end);
  const push = (start: number, end: number, replacement: string, date: string | null) => {
    if (!taken(start, end)) spans.push({ start, end, replacement, date });
  };

  for (const m of sentence.matchAll(DURATION)) {
    // "for two years" reaches back to now only in a present perfect ("I've lived here for two
    // years") or with "now"; "I'm moving to Japan for two years" and "I lived there for two years"
    // start nothing. "after N years" is told from now.
    // Without "for", "after" or "been", only "now" makes "seven years" a duration from now.
    const led = /^(?:for|after|been)\b/i.test(m[0]);
    if (!led && !/\bnow$/i.test(m[0])) continue;
    const reachesBack =
      /^after\b/i.test(m[0]) ||
      (/^been\b/i.test(m[0]) && !/\bhad been\b/i.test(sentence)) ||
      /\bnow$/i.test(m[0]) ||
      /\b(?:have|has)\b|['’]ve\b/i.test(sentence);
    if (!reachesBack) continue;
    const n = NUMBERS[m[1]!.toLowerCase()] ?? Number(m[1]);
    const years = /^year/i.test(m[2]!);
    const start = years ? ref.year - n : dayOf(Date.UTC(ref.year, ref.month - 1 - n, 15)).year;
    const since = years
      ? `since about ${start}`
      : `since about ${MONTHS[(((ref.month - 1 - n) % 12) + 12) % 12]} ${start}`;
    push(m.index, m.index + m[0].length, beside(m[0], since), null);
  }
  for (const m of sentence.matchAll(FEW_DAYS)) {
    const replacement = /^a /i.test(m[0])
      ? `a few days before ${refText}`
      : beside(m[0], `a few days before ${refText}`);
    push(m.index, m.index + m[0].length, replacement, isoOf(noon(ref) - 3 * DAY_MS));
  }
  // Only in a plan: "we haven't talked in a few days" looks back.
  for (const m of FUTURE.test(sentence) ? sentence.matchAll(FEW_DAYS_AHEAD) : []) {
    push(
      m.index,
      m.index + m[0].length,
      beside(m[0], `a few days after ${refText}`),
      isoOf(noon(ref) + 3 * DAY_MS),
    );
  }
  for (const m of sentence.matchAll(WEEKS_BACK)) {
    // "N weeks ago" is N weeks before the document's day, and is asked about that way ("two weeks
    // before 14 August 2023"); a weekend gets its two days, a week its day then.
    const said = m[0];
    const unit = (m[2] ?? m[3] ?? "week").toLowerCase();
    const count = m[1]?.toLowerCase();
    const n = count === undefined ? 2 : (COUNT[count] ?? NUMBERS[count] ?? Number(count));
    const ago =
      count === undefined && !/^the /i.test(said) ? "two weeks" : said.replace(/ (?:ago|back)$/i, "");
    const back = /^the /i.test(said) ? `two ${unit}s` : ago;
    if (/^weekend/.test(unit)) {
      const from = monday(ref) - 2 * DAY_MS - (n - 1) * 7 * DAY_MS;
      const range = formatRange(from, from + DAY_MS);
      push(m.index, m.index + said.length, beside(said, `${range}, ${back} before ${refText}`), isoOf(from));
    } else {
      const t = noon(ref) - n * 7 * DAY_MS;
      const d = dayOf(t);
      const around = `around ${formatDay(d.year, d.month, d.day)}`;
      push(m.index, m.index + said.length, beside(said, `${around}, ${back} before ${refText}`), isoOf(t));
    }
  }
  for (const m of sentence.matchAll(ORDINAL_DAY)) {
    const day = Number(m[1]);
    if (day < 1 || day > 31) continue;
    push(
      m.index,
      m.index + m[0].length,
      beside(m[0], formatDay(ref.year, ref.month, day)),
      isoDay(ref.year, ref.month, day),
    );
  }

  for (const m of sentence.matchAll(SEASON_OF_YEAR)) {
    // "the summer of 2019": the season of that year (winter from its December).
    const ends = SEASON_END[m[1]!.toLowerCase() as keyof typeof SEASON_END];
    push(m.index, m.index + m[0].length, m[0], isoDay(Number(m[2]), ends - 2, 1));
  }
  for (const m of sentence.matchAll(YEAR_ONLY)) {
    // "in 2019", "since 2015": a year alone, which chrono leaves alone; the words stay as said.
    const at = m.index + m[0].length - m[1]!.length;
    push(at, at + m[1]!.length, m[1]!, isoDay(Number(m[1]), 1, 1));
  }
  for (const m of sentence.matchAll(HOLIDAY)) {
    // "at Christmas", "last Thanksgiving", "Memorial Day weekend": the holiday's day in the year
    // the words and the tense point to.
    const lead = LEAD.exec(sentence.slice(0, m.index));
    const start = lead ? m.index - lead[0].length : m.index;
    let end = m.index + m[0].length;
    const weekend = /^ weekend\b/i.exec(sentence.slice(end));
    if (weekend) end += weekend[0].length;
    const dayIn = (y: number) => {
      const d = holidayIn(m[0], y)!;
      const t = Date.UTC(y, d.month - 1, d.day, 12);
      return { from: t, to: t };
    };
    const year = chooseYear(ref, wayOf(lead?.[1], sentence), dayIn);
    const t = dayIn(year).from;
    const d = dayOf(t);
    push(start, end, beside(sentence.slice(start, end), formatDay(d.year, d.month, d.day)), isoOf(t));
  }

  // chrono reads "Tue" but not "Tues": a copy with the forms it knows (no longer than the originals).
  let readable = sentence;
  for (const [re, short] of CHRONO_FORMS)
    readable = readable.replace(re, (w) => short.padEnd(w.length, "\u0000"));
  const parsed = chronoCue
    ? chrono.parse(readable.replaceAll("\u0000", " "), { instant: ref.instant, timezone: 0 })
    : [];
  for (const r of parsed) {
    const c = r.start;
    let year = c.get("year");
    let month = c.get("month");
    let day = c.get("day");
    if (year === null || month === null || day === null) continue;
    // "on Saturday", without "last" or "next": chrono takes the nearest one ahead; the tense says
    // which ("I ran a 5K on Saturday" said on a Wednesday was the Saturday gone by).
    if (
      c.isCertain("weekday") &&
      !c.isCertain("day") &&
      !/\b(?:last|next|past|this|coming)\b/i.test(r.text) &&
      !/\b(?:last|next|past|this|coming)\s+$/i.test(sentence.slice(0, r.index))
    ) {
      const t = Date.UTC(year, month - 1, day, 12);
      const way = wayOf(undefined, sentence);
      const shift = way === "past" && t > noon(ref) ? -7 : way === "ahead" && t < noon(ref) ? 7 : 0;
      if (shift !== 0) ({ year, month, day } = dayOf(t + shift * DAY_MS));
    }
    // The match in the sentence as written, whole words ("Tues" for chrono's "Tue").
    let end = r.index + r.text.trimEnd().length;
    while (end < sentence.length && /[A-Za-z]/.test(sentence[end]!)) end++;
    const text = sentence.slice(r.index, end).replace(/[.,;:!?]+$/, "");
    end = r.index + text.length;
    const lower = text.toLowerCase();
    // "now" is the document date itself, and "for 4 years" a duration: neither is a date.
    if (/^(?:right |just )?now$/.test(lower) || /^for\b/.test(lower)) continue;
    // "24/7" is all the time, not 24 July.
    if (/^24\/7$/.test(lower)) continue;
    // "the sun", "I sat down": an abbreviation in lower case, or after an article, is a word.
    const bare = lower.replace(/^(?:on|last|next|this) /, "");
    if (WORDLIKE.test(bare) && (text === lower || /\b(?:the|a|an)\s+$/i.test(sentence.slice(0, r.index))))
      continue;
    // "every Sunday", "each morning": a habit, not a day.
    if (/\b(?:every|each)\s+(?:other\s+)?$/i.test(sentence.slice(0, r.index))) continue;
    if (taken(r.index, end)) continue;
    const date = isoDay(year, month, day);
    const before = sentence.slice(0, r.index);
    // "born in May" says nothing of the year.
    const monthOnly = c.isCertain("month") && !c.isCertain("year") && !c.isCertain("day");
    if (monthOnly && MONTH_LEAD.test(before) && !/\bborn\b/i.test(sentence)) {
      // A month without its year ("in January", "last October"): the year the words and the tense
      // point to, beside "last" / "next" / "this" or completing the month as said.
      const lead = LEAD.exec(before);
      const monthIn = (y: number) => ({ from: Date.UTC(y, month - 1, 1, 12), to: Date.UTC(y, month, 0, 12) });
      const y = chooseYear(ref, wayOf(lead?.[1], sentence), monthIn);
      const from = lead ? r.index - lead[0].length : r.index;
      const said = sentence.slice(from, end);
      const replacement = lead ? beside(said, `${MONTHS[month - 1]} ${y}`) : `${text} ${y}`;
      push(from, end, replacement, isoDay(y, month, 1));
      continue;
    }
    if (EXPLICIT.test(text) && !/\b(?:last|next|ago|back|this)\b/i.test(text)) {
      const replacement = c.isCertain("year") || !c.isCertain("day") ? text : formatDay(year, month, day);
      const worded = /^on\b/i.test(text) && replacement !== text ? `on ${replacement}` : replacement;
      if (!c.isCertain("day") && !c.isCertain("weekday") && !c.isCertain("month")) continue;
      push(r.index, end, worded, c.isCertain("day") ? date : isoDay(year, month, 1));
      continue;
    }
    // "this past weekend": chrono leaves out "this".
    const start =
      /^(?:past|last)\b/i.test(text) && /\bthis\s+$/i.test(sentence.slice(0, r.index))
        ? sentence.slice(0, r.index).search(/\bthis\s+$/i)
        : r.index;
    const said = sentence.slice(start, end);
    if (!c.isCertain("day") && !c.isCertain("weekday") && c.isCertain("year") && !c.isCertain("month")) {
      // "last year", "3 years ago".
      const around = /\b(?:ago|back)\b/i.test(lower) ? `around ${year}` : String(year);
      push(start, end, beside(said, around), isoDay(year, 1, 1));
    } else if (WEEK.test(lower) || NEXT_WEEK.test(lower)) {
      // The range, and the week as people ask about it ("the week before 14 June 2023").
      const next = NEXT_WEEK.test(lower);
      const from = monday(ref) + (next ? 7 : -7) * DAY_MS;
      const anchor = `the week ${next ? "after" : "before"} ${refText}`;
      push(start, end, beside(said, `${formatRange(from, from + 6 * DAY_MS)}, ${anchor}`), isoOf(from));
    } else if (/^this weekend$/i.test(lower) && !FUTURE.test(sentence) && PAST.test(sentence)) {
      // "I went hiking this weekend": the weekend gone by, or the one it is.
      const weekend = new Date(noon(ref)).getUTCDay() % 6 === 0;
      const from = monday(ref) + (weekend ? 5 : -2) * DAY_MS;
      const anchor = weekend ? "" : `, the weekend before ${refText}`;
      push(start, end, beside(said, `${formatRange(from, from + DAY_MS)}${anchor}`), isoOf(from));
    } else if (WEEKEND.test(lower) || NEXT_WEEKEND.test(lower)) {
      const next = NEXT_WEEKEND.test(lower);
      const weekend = new Date(noon(ref)).getUTCDay() % 6 === 0;
      const ahead = next ? (weekend && /^next/i.test(lower) ? 12 : 5) : -2;
      const from = monday(ref) + ahead * DAY_MS;
      const anchor = `the weekend ${next ? "after" : "before"} ${refText}`;
      push(start, end, beside(said, `${formatRange(from, from + DAY_MS)}, ${anchor}`), isoOf(from));
    } else if (/^weekend$/.test(lower)) {
      // "over the weekend", "we had a quiet weekend": chrono takes the Saturday of whichever
      // weekend is nearest, which says neither that both days are meant nor which way. The tense
      // says which: a plan is the coming weekend, anything else the one just gone.
      const ahead = FUTURE.test(sentence);
      const weekend = new Date(noon(ref)).getUTCDay() % 6 === 0;
      const from = monday(ref) + (ahead ? (weekend ? 12 : 5) : -2) * DAY_MS;
      const anchor = `the weekend ${ahead ? "after" : "before"} ${refText}`;
      push(start, end, beside(said, `${formatRange(from, from + DAY_MS)}, ${anchor}`), isoOf(from));
    } else if (MONTH_OR_YEAR.test(lower) && !c.isCertain("day")) {
      push(start, end, beside(said, `${MONTHS[month - 1]} ${year}`), isoDay(year, month, 1));
    } else if (LAST_NIGHT.test(lower)) {
      // The night before the document's day, whatever the hour it was said (after midnight too).
      const t = noon(ref) - DAY_MS;
      const d = dayOf(t);
      push(start, end, beside(said, formatDay(d.year, d.month, d.day)), isoOf(t));
    } else if (/\bweeks? (?:ago|back)\b/i.test(lower)) {
      push(start, end, beside(said, `around ${formatDay(year, month, day)}`), date);
    } else if (c.isCertain("weekday") && !c.isCertain("day") && date < isoDay(ref.year, ref.month, ref.day)) {
      // "last Friday": the day, and the day as people ask about it ("the Friday before 8 May 2023").
      const weekday = WEEKDAYS[c.get("weekday") ?? 0];
      push(
        start,
        end,
        beside(said, `${formatDay(year, month, day)}, the ${weekday} before ${refText}`),
        date,
      );
    } else if (c.isCertain("day") || c.isCertain("weekday")) {
      push(start, end, beside(said, formatDay(year, month, day)), date);
    } else if (c.isCertain("month")) {
      push(start, end, beside(said, `${MONTHS[month - 1]} ${year}`), isoDay(year, month, 1));
    }
  }
  for (const m of sentence.matchAll(SEASON)) {
    // chrono has no seasons: "last summer" is the latest one that ended before the document date;
    // "this summer" the nearest one; "in the summer" the one gone by, or the coming one for a plan.
    const season = (m[2] ?? m[3])!.toLowerCase() as keyof typeof SEASON_END;
    const ends = SEASON_END[season];
    const said = m[1]?.toLowerCase();
    const way: Way =
      said === "next" || said === "this coming"
        ? "next"
        : said === "last" || said === "past"
          ? "last"
          : said === "this"
            ? "nearest"
            : wayOf(undefined, sentence);
    const seasonIn = (y: number) => ({ from: Date.UTC(y, ends - 3, 1, 12), to: Date.UTC(y, ends, 0, 12) });
    const year = chooseYear(ref, way, seasonIn);
    const name = season === "fall" ? "autumn" : season;
    push(m.index, m.index + m[0].length, beside(m[0], `the ${name} of ${year}`), isoDay(year, ends - 2, 1));
  }
  return spans.sort((a, b) => a.start - b.start);
}

const DATE_CUE =
  /\d|\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this|past|other day|the \d|week|weekend|month|year|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|noon|midnight|morning|evening|night)/i;
// What the rules without chrono also read: holidays, seasons, "a few days back".
const OTHER_CUE =
  /\b(?:christmas|xmas|new year|halloween|valentine|independence day|thanksgiving|memorial day|labor day|mother|father|easter|summer|winter|spring|fall|autumn|days back|in a (?:few|couple) )/i;
// A sentence about what is still to come.
const FUTURE =
  /\b(?:will|going|gonna|plan(?:s|ning)? to|hop(?:e|ing) to|can['’]?t wait|upcoming|coming up)\b|['’]ll\b/i;
const SEASON =
  /\b(?:(last|past|next|this coming|this) (summer|winter|spring|fall|autumn)|(?:in|over|during) (?:the )?(summer|winter|spring|fall|autumn))\b(?! of\b)/gi;
const SEASON_OF_YEAR = /\b(summer|winter|spring|fall|autumn) of ((?:19|20)\d{2})\b/gi;
// A year alone after a preposition ("in 2019", "since 2015"), not a decade ("the 1990s") or a range.
const YEAR_ONLY =
  /\b(?:in|since|during|until|by|from|around|back in) ((?:19|20)\d{2})\b(?![\d'’s]|\s*[-–]\s*\d)/gi;
// What a month or holiday said without its year may follow: "in January", "last October".
const MONTH_LEAD = /\b(?:in|since|during|until|by|from|of|early|late|mid|last|next|this)[\s-]+$/i;
const LEAD = /\b(last|next|this) +$/i;
// A sentence that tells what happened (for a date said without its year).
const PAST =
  /\b(?:was|were|did|had|went|got|made|took|saw|met|came|bought|spent|left|visited|moved|started|finished|traveled|travelled|graduated|ran|ate|drove|flew|wrote|sang|swam|won|lost|gave|told|found|felt|kept|sent|built|broke|brought|caught|taught|thought|chose|began|drank|rode|wore|threw|grew|knew|slept|woke|paid|heard|fell|forgot|sold|spoke|sat|stood|joined|tried|watched|played|painted|baked|cooked|hiked|danced|adopted)\b|\b(?:I|we|he|she|they)\s+\w+ed\b/i;
// A plan told in the present ("I'm running a 5K on Monday").
const PLAN = /\b(?:am|is|are|['’]m|['’]re)\s+\w+ing\b/i;

/** Which way a day, month, holiday or season said without its year lies from the document's day. */
type Way = "last" | "next" | "this" | "past" | "ahead" | "nearest";

/** "last" / "next" / "this" as said, else the tense: a plan lies ahead, a story behind. */
function wayOf(lead: string | undefined, sentence: string): Way {
  if (lead) return lead.toLowerCase() as Way;
  if (FUTURE.test(sentence)) return "ahead";
  if (PAST.test(sentence)) return "past";
  if (PLAN.test(sentence)) return "ahead";
  return "nearest";
}

/**
 * The year of something said without one, given its span in a year (`from`, `to`: noon of its
 * first and last day): "last" the latest that ended before the document's day, "next" the first
 * that starts after it, "past" the latest that had begun, "ahead" the first not yet over,
 * "this" and "nearest" the one nearest to it.
 */
function chooseYear(ref: DayRef, way: Way, spanIn: (year: number) => { from: number; to: number }): number {
  const now = noon(ref);
  const years = [ref.year - 1, ref.year, ref.year + 1];
  const spans = years.map((year) => ({ year, ...spanIn(year) }));
  const pick = (ok: (s: { from: number; to: number }) => boolean, latest: boolean) => {
    const fits = spans.filter(ok);
    return (latest ? fits.at(-1) : fits[0])?.year;
  };
  const distance = (s: { from: number; to: number }) =>
    now < s.from ? s.from - now : now > s.to ? now - s.to : 0;
  const nearest = spans.reduce((a, b) => (distance(b) < distance(a) ? b : a)).year;
  switch (way) {
    case "last":
      return pick((s) => s.to < now, true) ?? nearest;
    case "next":
      return pick((s) => s.from > now, false) ?? nearest;
    case "past":
      return pick((s) => s.from <= now, true) ?? nearest;
    case "ahead":
      return pick((s) => s.to >= now, false) ?? nearest;
    default:
      return nearest;
  }
}
// Last month of each season (northern hemisphere); winter ends in February of the next year (14).
const SEASON_END = { spring: 5, summer: 8, fall: 11, autumn: 11, winter: 14 } as const;
