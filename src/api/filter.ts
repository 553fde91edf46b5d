import { z } from "zod";
import {
  FILTER_FIELD_MAX_LENGTH,
  FILTER_FIELD_PATTERN,
  FILTER_LEAVES_MAX,
  FILTER_MAX_DEPTH,
  FILTER_OPERANDS_MAX,
  FILTER_OPERANDS_MIN,
  FILTER_VALUE_MAX_LENGTH,
} from "./limits.js";

const Field = z
  .string()
  .min(1)
  .max(FILTER_FIELD_MAX_LENGTH, `field must be at most ${FILTER_FIELD_MAX_LENGTH} characters`)
  .regex(
    FILTER_FIELD_PATTERN,
    "field must match ^[a-zA-Z0-9_.-]+$ (a metadata key, or source, type, documentId)",
  );

const caseSensitive = z.boolean().optional();
const Text = z
  .string()
  .max(FILTER_VALUE_MAX_LENGTH, `value must be at most ${FILTER_VALUE_MAX_LENGTH} characters`);

export const FilterLeaf = z.discriminatedUnion("operator", [
  z.strictObject({
    field: Field,
    operator: z.enum(["eq", "neq"]),
    value: z.union([Text, z.number(), z.boolean()]),
    caseSensitive,
  }),
  z.strictObject({ field: Field, operator: z.enum(["gt", "gte", "lt", "lte"]), value: z.number() }),
  z.strictObject({
    field: Field,
    operator: z.enum(["contains", "notContains"]),
    value: Text,
    caseSensitive,
  }),
  z.strictObject({
    field: Field,
    operator: z.enum(["arrayContains", "arrayNotContains"]),
    value: Text,
  }),
]);
export type FilterLeaf = z.infer<typeof FilterLeaf>;

export type FilterGroup = { operator: "and" | "or"; operands: Filter[] };
export type Filter = FilterLeaf | FilterGroup;

const FilterGroupSchema: z.ZodType<FilterGroup> = z.strictObject({
  operator: z.enum(["and", "or"]),
  get operands() {
    return z
      .array(FilterNode)
      .min(FILTER_OPERANDS_MIN, `a group needs at least ${FILTER_OPERANDS_MIN} operand`)
      .max(FILTER_OPERANDS_MAX, `a group takes at most ${FILTER_OPERANDS_MAX} operands`);
  },
});

// Group first: when both branches fail alike, describeIssues reports the first (a group's operands rule).
const FilterNode: z.ZodType<Filter> = z.union([FilterGroupSchema, FilterLeaf]);

/** How many group levels a filter nests; a leaf is 0. */
export function filterDepth(f: Filter): number {
  return "operands" in f ? 1 + Math.max(0, ...f.operands.map(filterDepth)) : 0;
}

/** A filter form's groups: the operand lists a node holds (none for a leaf). */
export type OperandLists = (node: object) => unknown[][];

const typedOperands: OperandLists = (node) => {
  const operands = (node as { operands?: unknown }).operands;
  return Array.isArray(operands) ? [operands] : [];
};

/**
 * Depth and size before the recursive parse: a body nests as deep as it likes, and walking it
 * recursively (zod, then the SQL compiler) would overflow the stack. An explicit stack stops at
 * the first level or leaf over the limit. Shared by the v5 form and the legacy one (whose
 * `AND` / `OR` lists are its operands), so that both keep the same limits.
 */
export function checkFilterSize(value: unknown, ctx: z.RefinementCtx, operandLists: OperandLists): void {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 0 }];
  let leaves = 0;
  while (stack.length) {
    const { node, depth } = stack.pop()!;
    const lists = typeof node === "object" && node !== null ? operandLists(node) : [];
    if (lists.length === 0) {
      if (++leaves > FILTER_LEAVES_MAX) {
        ctx.addIssue({ code: "custom", message: `a filter holds at most ${FILTER_LEAVES_MAX} leaves` });
        return;
      }
      continue;
    }
    if (depth + 1 > FILTER_MAX_DEPTH) {
      ctx.addIssue({ code: "custom", message: `filter groups nest at most ${FILTER_MAX_DEPTH} levels` });
      return;
    }
    for (const list of lists) for (const o of list) stack.push({ node: o, depth: depth + 1 });
  }
}

/**
 * A typed filter: a leaf `{field, operator, value}` or an and/or group, nested at most 5 levels,
 * with at most FILTER_LEAVES_MAX leaves in all. It parses a copy of the recursive node, not the
 * node itself: the MCP tools' JSON Schema then stays as it was (the OpenAPI document names the
 * union as one definition that groups refer back to).
 */
export const Filter: z.ZodType<Filter> = z.preprocess((value, ctx) => {
  checkFilterSize(value, ctx, typedOperands);
  return value;
}, FilterNode.clone());
