import { z } from "zod";
import {
  DOCUMENT_ID_MAX_LENGTH,
  JSON_VALUE_MAX_DEPTH,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_PAGE_DEFAULT,
  METADATA_ARRAY_MAX_ITEMS,
  METADATA_KEY_MAX_LENGTH,
  METADATA_KEYS_MAX,
  METADATA_MAX_BYTES,
  METADATA_VALUE_MAX_LENGTH,
  NAMESPACE_MAX_LENGTH,
  NAMESPACE_PATTERN,
  QUERY_MAX_LENGTH,
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
const FLAT = "metadata must be a flat object of string, number, boolean or string-array values";
/**
 * Flat: string keys; values string, number, boolean or array of strings; no nesting. As records
 * carry it (what is stored is shown as it is); a request's is held to the limits of `Metadata`.
 */
export const MetadataRecord = z.record(z.string(), MetadataValue, { error: FLAT });

/**
 * Metadata as a request sends it: flat, and at most METADATA_KEYS_MAX keys of at most
 * METADATA_KEY_MAX_LENGTH characters, string values of at most METADATA_VALUE_MAX_LENGTH,
 * arrays of at most METADATA_ARRAY_MAX_ITEMS, METADATA_MAX_BYTES in all (JSON, UTF-8). The sizes
 * are checked once the shape holds, each issue at its key (a union would report them as its own).
 */
export const Metadata = z
  .record(
    z.string().max(METADATA_KEY_MAX_LENGTH, `a key must be at most ${METADATA_KEY_MAX_LENGTH} characters`),
    MetadataValue,
    { error: FLAT },
  )
  .superRefine((value, ctx) => {
    const keys = Object.keys(value);
    if (keys.length > METADATA_KEYS_MAX) {
      ctx.addIssue({
        code: "custom",
        message: `holds at most ${METADATA_KEYS_MAX} keys (it has ${keys.length})`,
      });
      return;
    }
    const tooLong = `a value must be at most ${METADATA_VALUE_MAX_LENGTH} characters`;
    let issues = 0;
    const issue = (message: string, path: (string | number)[]) => {
      issues++;
      ctx.addIssue({ code: "custom", message, path });
    };
    for (const key of keys) {
      const v = value[key];
      if (typeof v === "string" && v.length > METADATA_VALUE_MAX_LENGTH) issue(tooLong, [key]);
      if (!Array.isArray(v)) continue;
      if (v.length > METADATA_ARRAY_MAX_ITEMS)
        issue(`an array holds at most ${METADATA_ARRAY_MAX_ITEMS} strings`, [key]);
      v.forEach((item, i) => {
        if (item.length > METADATA_VALUE_MAX_LENGTH) issue(tooLong, [key, i]);
      });
    }
    if (issues) return;
    const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
    if (bytes > METADATA_MAX_BYTES)
      ctx.addIssue({
        code: "custom",
        message: `must be at most ${METADATA_MAX_BYTES} bytes as JSON (it is ${bytes})`,
      });
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

/** A search text (`query`, the legacy `q`): not blank, at most QUERY_MAX_LENGTH characters. */
export const QueryText = (name: string) =>
  z
    .string()
    .trim()
    .min(1, `${name} must not be empty`)
    .max(QUERY_MAX_LENGTH, `${name} must be at most ${QUERY_MAX_LENGTH} characters`);

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
