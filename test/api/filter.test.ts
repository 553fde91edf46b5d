import { describe, expect, it } from "vitest";
import { FILTER_MAX_DEPTH, FILTER_OPERANDS_MAX, Filter, filterDepth } from "../../src/api/index.js";

const leaf = { field: "topic", operator: "eq", value: "travel" } as const;
const nest = (depth: number): Filter =>
  depth === 0 ? leaf : { operator: "and", operands: [nest(depth - 1)] };

describe("typed filter", () => {
  it("accepts each operator with its value type", () => {
    for (const f of [
      { field: "a", operator: "eq", value: "x", caseSensitive: false },
      { field: "a", operator: "neq", value: 3 },
      { field: "a.b", operator: "gte", value: 2 },
      { field: "a", operator: "contains", value: "x" },
      { field: "tags", operator: "arrayContains", value: "x" },
    ]) {
      expect(Filter.safeParse(f).success, JSON.stringify(f)).toBe(true);
    }
  });

  it("rejects a range operator with a string value", () => {
    expect(Filter.safeParse({ field: "a", operator: "gt", value: "3" }).success).toBe(false);
  });

  it(`accepts ${FILTER_MAX_DEPTH} nested groups and rejects ${FILTER_MAX_DEPTH + 1}`, () => {
    expect(filterDepth(nest(FILTER_MAX_DEPTH))).toBe(FILTER_MAX_DEPTH);
    expect(Filter.safeParse(nest(FILTER_MAX_DEPTH)).success).toBe(true);
    const r = Filter.safeParse(nest(FILTER_MAX_DEPTH + 1));
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(/at most 5 levels/);
  });

  it(`accepts ${FILTER_OPERANDS_MAX} operands and rejects ${FILTER_OPERANDS_MAX + 1}`, () => {
    const group = (n: number) => ({ operator: "or", operands: Array.from({ length: n }, () => leaf) });
    expect(Filter.safeParse(group(FILTER_OPERANDS_MAX)).success).toBe(true);
    expect(Filter.safeParse(group(FILTER_OPERANDS_MAX + 1)).success).toBe(false);
    expect(Filter.safeParse(group(0)).success).toBe(false);
  });

  it("rejects a field outside ^[a-zA-Z0-9_.-]+$", () => {
    expect(Filter.safeParse({ field: "a b", operator: "eq", value: 1 }).success).toBe(false);
  });
});
