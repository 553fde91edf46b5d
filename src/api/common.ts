import { z } from "zod";
import {
  DOCUMENT_ID_MAX_LENGTH,
  JSON_VALUE_MAX_DEPTH,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_PAGE_DEFAULT,
  NAMESPACE_MAX_LENGTH,
  NAMESPACE_PATTERN,
} from "./limits.js";

/** v5 namespace path segment; the same rule as the legacy `containerTag`. */
export const Namespace = z
  .string()
  .min(1, "must be 1 to 100 characters")
  .max(NAMESPACE_MAX_LENGTH, `must be at most ${NAMESPACE_MAX_LENGTH} characters`)
  .regex(NAMESPACE_PATTERN, "must match ^[a-zA-Z0-9_:-]+$ (letters, digits, _ : -)");
export type Namespace = z.infer<typeof Namespace>;

/** A service-assigned or caller-defined document id. */
export const DocumentId = z
  .string()
  .min(1, "must not be empty")
  .max(DOCUMENT_ID_MAX_LENGTH, `must be at most ${DOCUMENT_ID_MAX_LENGTH} characters`);

export const MetadataValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);
/** Flat: string keys; values string, number, boolean or array of strings; no nesting. */
export const Metadata = z.record(z.string(), MetadataValue, {
  error: "metadata must be a flat object of string, number, boolean or string-array values",
});
export type Metadata = z.infer<typeof Metadata>;

/** Whether `value` nests arrays and objects more than `max` levels (itself one), walked without recursion. */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 0 }];
  while (stack.length) {
    const { node, depth } = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(node)) stack.push({ node: child, depth: depth + 1 });
  }
  return false;
}

/**
 * A free-form JSON object (a connector's settings), at most JSON_VALUE_MAX_DEPTH levels deep:
 * zod does not look inside its values, but storing it writes it out recursively, and a body
 * nested 10,000 deep overflowed the stack there (a 500 instead of a 400).
 */
export const JsonObject = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  if (nestsDeeperThan(value, JSON_VALUE_MAX_DEPTH))
    ctx.addIssue({
      code: "custom",
      message: `nests at most ${JSON_VALUE_MAX_DEPTH} levels of objects and arrays`,
    });
});

/** `YYYY-MM-DD` or a full ISO 8601 timestamp. */
export const DateString = z.union([z.iso.date(), z.iso.datetime({ offset: true, local: true })], {
  error: "must be a date (YYYY-MM-DD) or an ISO 8601 timestamp",
});

export const Timestamps = z.looseObject({
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const ErrorResponse = z.looseObject({
  error: z.string(),
  details: z.string().optional(),
});
export type ErrorResponse = z.infer<typeof ErrorResponse>;

export const Pagination = z.looseObject({
  currentPage: z.number().int(),
  totalPages: z.number().int(),
  totalItems: z.number().int().optional(),
  limit: z.number().int().optional(),
});
export type Pagination = z.infer<typeof Pagination>;

/** Query integers arrive as strings; numbers from typed callers pass as they are. */
const queryInt = (name: string, min: number, max: number, fallback: number) =>
  z.coerce
    .number({ error: `${name} must be an integer` })
    .int(`${name} must be an integer`)
    .min(min, `${name} must be at least ${min}`)
    .max(max, `${name} must be at most ${max}`)
    .default(fallback);

export const PageQuery = z.strictObject({
  page: queryInt("page", 1, Number.MAX_SAFE_INTEGER, LIST_PAGE_DEFAULT),
  limit: queryInt("limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT),
});
export type PageQuery = z.input<typeof PageQuery>;

export { queryInt };

/** A comma-separated list, or a repeated query parameter, of known values. */
export const includeList = <T extends string>(values: readonly [T, ...T[]]) =>
  z.preprocess((v) => {
    if (v === undefined) return undefined;
    const parts = (Array.isArray(v) ? v : [v]).flatMap((s) => String(s).split(","));
    return parts.map((s) => s.trim()).filter(Boolean);
  }, z.array(z.enum(values, { error: `must be one of ${values.join(", ")}` })).optional());

/** Query booleans arrive as "true"/"false". */
export const queryBool = z.preprocess(
  (v) => (v === "true" || v === "1" ? true : v === "false" || v === "0" ? false : v),
  z.boolean({ error: "must be true or false" }),
);
