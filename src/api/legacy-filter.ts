/**
 * The v3/v4 filter form, `{AND | OR: [{key, value, filterType, negate, ignoreCase,
 * numericOperator}]}` (groups may nest), and its one translation into the typed filter of v5
 * (filter.ts). The translation runs as part of parsing: a legacy route receives the typed filter,
 * checked by the v5 rules (depth, size), and a bad condition is a 400 naming its path and rule.
 */
import { z } from "zod";
import { checkFilterSize, Filter, type FilterLeaf, type OperandLists } from "./filter.js";
import {
  FILTER_FIELD_MAX_LENGTH,
  FILTER_FIELD_PATTERN,
  FILTER_OPERANDS_MAX,
  FILTER_OPERANDS_MIN,
} from "./limits.js";

export const LegacyFilterType = z.enum(["metadata", "numeric", "array_contains", "string_contains"], {
  error: "filterType must be metadata, numeric, array_contains or string_contains",
});
export const NumericOperator = z.enum([">", ">=", "<", "<=", "=", "!="], {
  error: 'numericOperator must be one of ">", ">=", "<", "<=", "=", "!="',
});

export const LegacyCondition = z.strictObject({
  key: z
    .string()
    .min(1, "key must not be empty")
    .max(FILTER_FIELD_MAX_LENGTH, `key must be at most ${FILTER_FIELD_MAX_LENGTH} characters`)
    .regex(
      FILTER_FIELD_PATTERN,
      "key must match ^[a-zA-Z0-9_.-]+$ (a metadata key, or source, type, documentId)",
    ),
  value: z.union([z.string(), z.number(), z.boolean()], {
    error: "value must be a string, number or boolean",
  }),
  /** Default `metadata`: equality on a metadata key. */
  filterType: LegacyFilterType.optional(),
  negate: z.boolean().optional(),
  ignoreCase: z.boolean().optional(),
  /** With filterType `numeric`; default `=`. */
  numericOperator: NumericOperator.optional(),
});
export type LegacyCondition = z.infer<typeof LegacyCondition>;

export type LegacyGroup = { AND: LegacyNode[] } | { OR: LegacyNode[] };
export type LegacyNode = LegacyCondition | LegacyGroup;

const operands = () =>
  z
    .array(LegacyNodeSchema)
    .min(FILTER_OPERANDS_MIN, `a group needs at least ${FILTER_OPERANDS_MIN} condition`)
    .max(FILTER_OPERANDS_MAX, `a group takes at most ${FILTER_OPERANDS_MAX} conditions`);

const LegacyGroupSchema: z.ZodType<LegacyGroup> = z.union([
  z.strictObject({
    get AND() {
      return operands();
    },
  }),
  z.strictObject({
    get OR() {
      return operands();
    },
  }),
]) as z.ZodType<LegacyGroup>;

const LegacyNodeSchema: z.ZodType<LegacyNode> = z.union([LegacyGroupSchema, LegacyCondition]);

type Issue = { message: string; path: (string | number)[] };

const NEGATED: Record<z.infer<typeof NumericOperator>, z.infer<typeof NumericOperator>> = {
  ">": "<=",
  ">=": "<",
  "<": ">=",
  "<=": ">",
  "=": "!=",
  "!=": "=",
};
const NUMERIC: Record<z.infer<typeof NumericOperator>, "gt" | "gte" | "lt" | "lte" | "eq" | "neq"> = {
  ">": "gt",
  ">=": "gte",
  "<": "lt",
  "<=": "lte",
  "=": "eq",
  "!=": "neq",
};

/** One condition as a typed leaf; an issue (path relative to the condition) when it cannot be one. */
function leafOf(c: LegacyCondition, at: (string | number)[], issues: Issue[]): FilterLeaf | undefined {
  const negate = c.negate === true;
  const caseSensitive = c.ignoreCase === true ? { caseSensitive: false } : {};
  const fail = (field: string, message: string) => {
    issues.push({ message, path: [...at, field] });
    return undefined;
  };
  switch (c.filterType ?? "metadata") {
    case "metadata":
      return { field: c.key, operator: negate ? "neq" : "eq", value: c.value, ...caseSensitive };
    case "numeric": {
      const n =
        typeof c.value === "number" ? c.value : typeof c.value === "string" ? Number(c.value) : Number.NaN;
      if (typeof c.value === "string" && c.value.trim() === "")
        return fail("value", "value must be a number for filterType numeric");
      if (!Number.isFinite(n)) return fail("value", "value must be a number for filterType numeric");
      const op = c.numericOperator ?? "=";
      return { field: c.key, operator: NUMERIC[negate ? NEGATED[op] : op], value: n };
    }
    case "array_contains":
      if (c.ignoreCase === true)
        return fail("ignoreCase", "ignoreCase is not supported with filterType array_contains");
      if (typeof c.value !== "string")
        return fail("value", "value must be a string for filterType array_contains");
      return { field: c.key, operator: negate ? "arrayNotContains" : "arrayContains", value: c.value };
    case "string_contains":
      if (typeof c.value !== "string")
        return fail("value", "value must be a string for filterType string_contains");
      return {
        field: c.key,
        operator: negate ? "notContains" : "contains",
        value: c.value,
        ...caseSensitive,
      };
  }
}

/** The typed filter a legacy one means; conditions that cannot be translated are reported in `issues`. */
export function toTypedFilter(node: LegacyNode, issues: Issue[] = [], at: (string | number)[] = []): Filter {
  if ("AND" in node || "OR" in node) {
    const and = "AND" in node;
    const list = and ? node.AND : node.OR;
    const key = and ? "AND" : "OR";
    return {
      operator: and ? "and" : "or",
      operands: list.map((n, i) => toTypedFilter(n, issues, [...at, key, i])),
    };
  }
  const leaf = leafOf(node, at, issues);
  // A placeholder keeps the shape while the issues reject the request.
  return leaf ?? { field: node.key, operator: "eq", value: "" };
}

/** A legacy group's operands: its `AND` and `OR` lists (a node holding both is refused by the parse). */
const legacyOperands: OperandLists = (node) =>
  [(node as { AND?: unknown }).AND, (node as { OR?: unknown }).OR].filter((l): l is unknown[] =>
    Array.isArray(l),
  );

/**
 * A legacy `filters` body field: its depth and size checked first, by the typed filter's limits
 * and without recursion (the recursive parse of a group nested 1,000 deep overflowed the stack),
 * then parsed in its own form and translated once into the typed filter. Routes read the typed filter.
 */
export const LegacyFilter = z
  .preprocess((value, ctx) => {
    checkFilterSize(value, ctx, legacyOperands);
    return value;
  }, LegacyGroupSchema)
  .transform((group, ctx): Filter => {
    const issues: Issue[] = [];
    const typed = toTypedFilter(group, issues);
    for (const i of issues) ctx.addIssue({ code: "custom", message: i.message, path: i.path });
    if (issues.length) return z.NEVER;
    const checked = Filter.safeParse(typed);
    if (!checked.success) {
      for (const i of checked.error.issues) ctx.addIssue({ code: "custom", message: i.message, path: [] });
      return z.NEVER;
    }
    return checked.data;
  });
