import { formatDay, parseDocumentDate } from "../text/dates.js";

/**
 * The label a dated document's units carry, `[8 May 2023]`: search hits of its chunks start with
 * it, and a memory's indexed context opens with it, so "when" questions find and read the day.
 * Null without a (parseable) date.
 */
export function dayLabel(documentDate: string | null | undefined): string | null {
  const d = parseDocumentDate(documentDate);
  return d ? `[${formatDay(d.year, d.month, d.day)}]` : null;
}
