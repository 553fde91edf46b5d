import type { z } from "zod";

/**
 * Turns zod issues into the `details` of a 400: each names the field and the rule,
 * for example `limit: limit must be at most 100`.
 */
export function describeIssues(where: string, issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((i) => {
      const path = i.path.length ? i.path.map(String).join(".") : where;
      const field = i.path.length ? `${where === "body" ? "" : `${where}.`}${path}` : where;
      return `${field}: ${i.message}`;
    })
    .join("; ");
}
