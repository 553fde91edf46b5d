import { describe, expect, it } from "vitest";
import { describeIssues } from "../../src/api/errors.js";
import { LegacyFilter } from "../../src/api/legacy-filter.js";

const parse = (v: unknown) => LegacyFilter.parse(v);
const issues = (v: unknown) => {
  const r = LegacyFilter.safeParse(v);
  if (r.success) throw new Error("expected the filter to be refused");
  return describeIssues("filters", r.error.issues);
};

describe("the v3/v4 filter form, translated once into the typed filter", () => {
  it("maps each filterType (and negate, ignoreCase) onto a typed leaf", () => {
    expect(
      parse({
        AND: [
          { key: "kind", value: "note" },
          { key: "kind", value: "Draft", negate: true, ignoreCase: true },
          { key: "year", value: "2020", filterType: "numeric", numericOperator: ">=" },
          { key: "year", value: 2024, filterType: "numeric", numericOperator: "<", negate: true },
          { key: "n", value: 3, filterType: "numeric" },
          { key: "tags", value: "red", filterType: "array_contains" },
          { key: "tags", value: "blue", filterType: "array_contains", negate: true },
          { key: "title", value: "Plan", filterType: "string_contains", ignoreCase: true },
          { key: "title", value: "old", filterType: "string_contains", negate: true },
        ],
      }),
    ).toEqual({
      operator: "and",
      operands: [
        { field: "kind", operator: "eq", value: "note" },
        { field: "kind", operator: "neq", value: "Draft", caseSensitive: false },
        { field: "year", operator: "gte", value: 2020 },
        { field: "year", operator: "gte", value: 2024 },
        { field: "n", operator: "eq", value: 3 },
        { field: "tags", operator: "arrayContains", value: "red" },
        { field: "tags", operator: "arrayNotContains", value: "blue" },
        { field: "title", operator: "contains", value: "Plan", caseSensitive: false },
        { field: "title", operator: "notContains", value: "old" },
      ],
    });
  });

  it("keeps nested AND/OR groups", () => {
    expect(
      parse({
        OR: [
          { key: "a", value: "1" },
          {
            AND: [
              { key: "b", value: true },
              { key: "c", value: 2 },
            ],
          },
        ],
      }),
    ).toEqual({
      operator: "or",
      operands: [
        { field: "a", operator: "eq", value: "1" },
        {
          operator: "and",
          operands: [
            { field: "b", operator: "eq", value: true },
            { field: "c", operator: "eq", value: 2 },
          ],
        },
      ],
    });
  });

  it("names the path and rule of what cannot be translated", () => {
    expect(issues({ AND: [{ key: "n", value: "many", filterType: "numeric" }] })).toBe(
      "filters.AND.0.value: value must be a number for filterType numeric",
    );
    expect(
      issues({ AND: [{ key: "n", value: "1", filterType: "numeric", numericOperator: "~" }] }),
    ).toContain("numericOperator must be one of");
    expect(issues({ AND: [{ key: "bad key", value: "x" }] })).toContain("key must match ^[a-zA-Z0-9_.-]+$");
    expect(issues({ AND: [] })).toContain("a group needs at least 1 condition");
    expect(issues({ AND: [{ key: "a", value: "x", filterType: "fuzzy" }] })).toContain(
      "filterType must be metadata, numeric, array_contains or string_contains",
    );
  });

  it("applies the typed filter's own depth limit", () => {
    let node: unknown = { key: "a", value: "x" };
    for (let i = 0; i < 6; i++) node = { AND: [node] };
    expect(issues(node)).toContain("filter groups nest at most 5 levels");
  });
});
