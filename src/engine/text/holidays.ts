/**
 * Holidays people date things by ("at Christmas", "on Thanksgiving"), which chrono does not read:
 * each one's day in a given year. Fixed days, the US holidays that fall on the nth weekday of a
 * month, and Easter (Western computus).
 */

type DayOfYear = { month: number; day: number };

/** The nth (1-based; -1 the last) weekday (0 Sunday) of a month. */
function nthWeekday(year: number, month: number, weekday: number, n: number): DayOfYear {
  if (n > 0) {
    const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
    return { month, day: 1 + ((weekday - first + 7) % 7) + (n - 1) * 7 };
  }
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const last = new Date(Date.UTC(year, month - 1, lastDay)).getUTCDay();
  return { month, day: lastDay - ((last - weekday + 7) % 7) };
}

/** Easter Sunday (Gregorian, anonymous algorithm). */
function easter(year: number): DayOfYear {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  return { month, day: ((h + l - 7 * m + 114) % 31) + 1 };
}

const fixed =
  (month: number, day: number) =>
  (_year: number): DayOfYear => ({ month, day });

/** Lowercased name (apostrophes dropped) -> its day in a year. */
const HOLIDAYS: Record<string, (year: number) => DayOfYear> = {
  "christmas eve": fixed(12, 24),
  "christmas day": fixed(12, 25),
  christmas: fixed(12, 25),
  xmas: fixed(12, 25),
  "new years eve": fixed(12, 31),
  "new years day": fixed(1, 1),
  "new years": fixed(1, 1),
  halloween: fixed(10, 31),
  "valentines day": fixed(2, 14),
  "independence day": fixed(7, 4),
  "fourth of july": fixed(7, 4),
  thanksgiving: (y) => nthWeekday(y, 11, 4, 4),
  "memorial day": (y) => nthWeekday(y, 5, 1, -1),
  "labor day": (y) => nthWeekday(y, 9, 1, 1),
  "mothers day": (y) => nthWeekday(y, 5, 0, 2),
  "fathers day": (y) => nthWeekday(y, 6, 0, 3),
  easter,
};

/** A holiday's name as said ("Christmas", "New Year's Eve", "Mother's Day"), longest first. */
export const HOLIDAY =
  /\b(?:christmas(?: eve| day)?|xmas|new year['’]?s(?: eve| day)?|halloween|valentine['’]?s day|independence day|fourth of july|thanksgiving|memorial day|labor day|mother['’]?s day|father['’]?s day|easter)\b/gi;

/** The holiday's day in `year` ("Thanksgiving", 2023 -> 23 November), or null for an unknown name. */
export function holidayIn(name: string, year: number): DayOfYear | null {
  const key = name.toLowerCase().replace(/['’]/g, "");
  const of = HOLIDAYS[key];
  return of ? of(year) : null;
}
