import type { z } from "zod";

type Issue = z.core.$ZodIssue;

/**
 * The `error` of a 400 that the caller cannot fix: the server lacks a setting (an OAuth app's
 * client id, for example) that whoever runs it must give; `details` names it.
 */
export const SERVER_SETTING_MISSING = "Server setting missing";

/**
 * The `error` of a 403 to a read-only key (`memctx keys create --read-only`) on an endpoint that
 * writes; `details` names the endpoint. Retrying with the same key cannot help.
 */
export const READ_ONLY_KEY = "Read-only API key";

/**
 * Turns zod issues into the `details` of a 400: each names the field and the rule,
 * for example `limit: limit must be at most 100`.
 */
export function describeIssues(where: string, issues: readonly Issue[]): string {
  return issues
    .flatMap((i) => specific(i))
    .map((i) => {
      const path = i.path.length ? i.path.map(String).join(".") : where;
      const field = i.path.length ? `${where === "body" ? "" : `${where}.`}${path}` : where;
      return `${field}: ${i.message}`;
    })
    .join("; ");
}

/**
 * Unions and record keys report a bare "Invalid input"; the rule is in their inner issues.
 * For a union, the branch that failed least (then got deepest) is the one the caller meant.
 */
function specific(issue: Issue): Issue[] {
  const under = (inner: Issue): Issue[] =>
    specific({ ...inner, path: [...issue.path, ...inner.path] } as Issue);
  if (issue.code === "invalid_key" || issue.code === "invalid_element") {
    return issue.issues.length ? issue.issues.flatMap(under) : [issue];
  }
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return [issue];
  const depth = (b: Issue[]) => Math.max(...b.map((i) => i.path.length));
  const branches = issue.errors.map((b) => b.flatMap(under)).filter((b) => b.length > 0);
  if (branches.length === 0) return [issue];
  branches.sort((a, b) => a.length - b.length || depth(b) - depth(a));
  const [best, next] = branches as [Issue[], Issue[] | undefined];
  // Branches that failed differently at the union itself (e.g. each wanted another type): no branch is
  // the one meant, so the union's own message stands.
  const same = (a: Issue[], b: Issue[]) => a.map((i) => i.message).join() === b.map((i) => i.message).join();
  if (next && best.length === next.length && depth(best) === depth(next) && !same(best, next)) {
    if (depth(best) <= issue.path.length) return [issue];
  }
  return best;
}
