import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Filter } from "../../../src/api/filter.js";
import { FILTER_FIELD_MAX_LENGTH, FILTER_LEAVES_MAX, FILTER_SQL_MAX_BYTES } from "../../../src/api/limits.js";
import { Params } from "../../../src/engine/store/connection.js";
import { compileFilter, type FilterForm, FilterTooLargeError } from "../../../src/engine/store/filter.js";
import { TEST_BACKEND } from "../../support/harness.js";
import { TestStore } from "../search/store.js";

let store: TestStore;
const ids: Record<string, string> = {};

beforeAll(async () => {
  store = await TestStore.open();
  const ns = await store.namespace("filters");
  ids.a = (
    await store.document(ns, ["a"], {
      metadata: {
        topic: "Travel",
        "a.b": "dotted",
        n: 5,
        flag: true,
        tags: ["work", "home"],
        note: "Trip to Berlin",
      },
      source: "notion",
      customId: "my-a",
    })
  ).id;
  ids.b = (
    await store.document(ns, ["b"], {
      metadata: { topic: "travel", n: 10.5, flag: false, tags: ["home"], note: "trip to paris" },
      source: "api",
      type: "webpage",
    })
  ).id;
  // "5" is a string and 1 is a number that a boolean filter must not take for true.
  ids.c = (await store.document(ns, ["c"], { metadata: { n: "5", one: 1, tags: "work" } })).id;
});
afterAll(async () => await store.close());

/** The documents a (validated) filter selects, as letters. */
/** Which of compileFilter's forms the cases below run through: all must agree. */
let form: FilterForm = "sql";

async function select(filter: unknown): Promise<string[]> {
  const parsed = Filter.parse(filter);
  const p = new Params(store.db.dialect);
  const f = compileFilter(
    parsed,
    {
      metadata: "d.metadata",
      source: "d.source",
      type: "d.type",
      documentId: ["d.id", "d.custom_id"],
    },
    p,
    form,
  );
  const rows = (await store.db.prepare(`SELECT d.id FROM documents d WHERE ${f}`).all(...p.values)) as {
    id: string;
  }[];
  const byId = Object.fromEntries(Object.entries(ids).map(([k, v]) => [v, k]));
  return rows.map((r) => byId[r.id]!).sort();
}

// SQLite takes its own SQL (the `sql` form) and the function form (a JavaScript function of the
// connection); PostgreSQL takes SQL in its own JSON operators (the `postgres` form).
const FORMS = TEST_BACKEND === "postgres" ? (["postgres"] as const) : (["sql", "function"] as const);
describe.each(FORMS)("compileFilter, %s form", (which) => {
  beforeAll(() => {
    form = which;
  });

  it("matches no filter as everything", () => {
    const p = new Params(store.db.dialect);
    expect(compileFilter(undefined, { metadata: "d.metadata" }, p)).toBe("TRUE");
    expect(p.values).toEqual([]);
  });

  it("compares strings case-sensitively by default", async () => {
    expect(await select({ field: "topic", operator: "eq", value: "travel" })).toEqual(["b"]);
    expect(await select({ field: "topic", operator: "eq", value: "Travel" })).toEqual(["a"]);
  });

  it("compares strings case-insensitively with caseSensitive: false", async () => {
    expect(await select({ field: "topic", operator: "eq", value: "TRAVEL", caseSensitive: false })).toEqual([
      "a",
      "b",
    ]);
    expect(await select({ field: "topic", operator: "neq", value: "TRAVEL", caseSensitive: false })).toEqual([
      "c",
    ]);
  });

  it("treats neq as the exact negation of eq, so rows without the key match it", async () => {
    expect(await select({ field: "topic", operator: "neq", value: "travel" })).toEqual(["a", "c"]);
  });

  it("compares numbers by JSON type: a numeric string is not a number", async () => {
    expect(await select({ field: "n", operator: "eq", value: 5 })).toEqual(["a"]);
    expect(await select({ field: "n", operator: "eq", value: "5" })).toEqual(["c"]);
    expect(await select({ field: "n", operator: "eq", value: 10.5 })).toEqual(["b"]);
  });

  it("compares booleans as JSON true/false, never as 1/0", async () => {
    expect(await select({ field: "flag", operator: "eq", value: true })).toEqual(["a"]);
    expect(await select({ field: "flag", operator: "eq", value: false })).toEqual(["b"]);
    expect(await select({ field: "one", operator: "eq", value: true })).toEqual([]);
    expect(await select({ field: "flag", operator: "neq", value: true })).toEqual(["b", "c"]);
  });

  it("applies gt, gte, lt and lte to numbers only", async () => {
    expect(await select({ field: "n", operator: "gt", value: 5 })).toEqual(["b"]);
    expect(await select({ field: "n", operator: "gte", value: 5 })).toEqual(["a", "b"]);
    expect(await select({ field: "n", operator: "lt", value: 10.5 })).toEqual(["a"]);
    expect(await select({ field: "n", operator: "lte", value: 10.5 })).toEqual(["a", "b"]);
    expect(await select({ field: "n", operator: "lt", value: 100 })).not.toContain("c");
  });

  it("tests substrings with contains and notContains, with the case option", async () => {
    expect(await select({ field: "note", operator: "contains", value: "trip" })).toEqual(["b"]);
    expect(
      await select({ field: "note", operator: "contains", value: "TRIP", caseSensitive: false }),
    ).toEqual(["a", "b"]);
    expect(await select({ field: "note", operator: "notContains", value: "Berlin" })).toEqual(["b", "c"]);
    expect(
      await select({ field: "note", operator: "notContains", value: "TRIP", caseSensitive: false }),
    ).toEqual(["c"]);
  });

  it("treats % and _ in a contains value literally", async () => {
    expect(await select({ field: "note", operator: "contains", value: "%" })).toEqual([]);
    expect(await select({ field: "note", operator: "contains", value: "_" })).toEqual([]);
  });

  it("tests membership of string arrays, a plain string counting as one element", async () => {
    expect(await select({ field: "tags", operator: "arrayContains", value: "home" })).toEqual(["a", "b"]);
    expect(await select({ field: "tags", operator: "arrayContains", value: "work" })).toEqual(["a", "c"]);
    expect(await select({ field: "tags", operator: "arrayNotContains", value: "work" })).toEqual(["b"]);
    expect(await select({ field: "tags", operator: "arrayContains", value: "wor" })).toEqual([]);
  });

  it("reads a period as part of the key, not as a path", async () => {
    expect(await select({ field: "a.b", operator: "eq", value: "dotted" })).toEqual(["a"]);
  });

  it("maps source, type and documentId to the document's fields", async () => {
    expect(await select({ field: "source", operator: "eq", value: "notion" })).toEqual(["a"]);
    expect(await select({ field: "type", operator: "eq", value: "webpage" })).toEqual(["b"]);
    expect(await select({ field: "type", operator: "neq", value: "webpage" })).toEqual(["a", "c"]);
    expect(await select({ field: "documentId", operator: "eq", value: ids.b })).toEqual(["b"]);
    expect(await select({ field: "documentId", operator: "eq", value: "my-a" })).toEqual(["a"]);
    expect(await select({ field: "documentId", operator: "neq", value: "my-a" })).toEqual(["b", "c"]);
  });

  it("combines and/or groups, nested", async () => {
    expect(
      await select({
        operator: "or",
        operands: [
          {
            operator: "and",
            operands: [
              { field: "topic", operator: "eq", value: "travel", caseSensitive: false },
              { field: "n", operator: "gt", value: 6 },
            ],
          },
          { field: "one", operator: "eq", value: 1 },
        ],
      }),
    ).toEqual(["b", "c"]);
    expect(
      await select({
        operator: "and",
        operands: [
          { field: "tags", operator: "arrayContains", value: "home" },
          {
            operator: "or",
            operands: [
              { field: "flag", operator: "eq", value: true },
              { field: "n", operator: "lt", value: 0 },
            ],
          },
        ],
      }),
    ).toEqual(["a"]);
  });

  it("never puts a value in the SQL text", async () => {
    const hostile = "x' OR 1=1 --";
    const p = new Params(store.db.dialect);
    const f = compileFilter(
      {
        operator: "or",
        operands: [
          { field: "topic", operator: "eq", value: hostile },
          { field: "note", operator: "contains", value: hostile },
        ],
      },
      { metadata: "d.metadata" },
      p,
      form,
    );
    expect(f).not.toContain(hostile);
    if (form !== "function") expect(p.values).toContain(hostile);
    else {
      // One handle, and one text for every filter of a target: one prepared statement.
      expect(p.values).toHaveLength(1);
      const other = compileFilter(
        { field: "n", operator: "gt", value: 3 },
        { metadata: "d.metadata" },
        new Params(store.db.dialect),
        form,
      );
      expect(other).toBe(f);
    }
    expect(await select({ field: "topic", operator: "eq", value: hostile })).toEqual([]);
  });
});

describe("a filter's SQL", () => {
  /** A filter of `leaves` equality leaves on fields of `width` characters, in groups of 200. */
  const wide = (leaves: number, width: number) =>
    Filter.parse({
      operator: "or",
      operands: Array.from({ length: leaves / 200 }, (_, g) => ({
        operator: "and",
        operands: Array.from({ length: 200 }, (_, i) => ({
          field: `k${g}_${i}_`.padEnd(width, "x"),
          operator: "eq",
          value: "v",
        })),
      })),
    });

  it(`compiles every filter of the contract within FILTER_SQL_MAX_BYTES on this backend`, () => {
    const form = TEST_BACKEND === "postgres" ? "postgres" : undefined;
    const f = compileFilter(
      wide(FILTER_LEAVES_MAX, FILTER_FIELD_MAX_LENGTH),
      { metadata: "d.metadata", documentId: ["d.id", "d.custom_id"] },
      new Params(store.db.dialect),
      form,
    );
    expect(Buffer.byteLength(f)).toBeLessThanOrEqual(FILTER_SQL_MAX_BYTES);
  });

  it("refuses a text past FILTER_SQL_MAX_BYTES before any database sees it", () => {
    // SQLite's SQL form writes each key into the text: forced on the largest filter, it is too long.
    expect(() =>
      compileFilter(
        wide(FILTER_LEAVES_MAX, FILTER_FIELD_MAX_LENGTH),
        { metadata: "d.metadata" },
        new Params(store.db.dialect),
        "sql",
      ),
    ).toThrow(FilterTooLargeError);
    expect(() =>
      compileFilter(
        wide(FILTER_LEAVES_MAX, FILTER_FIELD_MAX_LENGTH),
        { metadata: "d.metadata" },
        new Params(store.db.dialect),
        "sql",
      ),
    ).toThrow(/more than the 524288 a filter may \(FILTER_SQL_MAX_BYTES\)/);
  });
});
