import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { STEM_RANKS } from "../../../src/engine/text/background.js";
import { inOrder, lookUp, shippedLines, sortedLines } from "../../../src/engine/text/sorted-lines.js";
import { packageUrl } from "../../../src/package-root.js";

describe("sortedLines", () => {
  it("finds every key's value as a Map would, in order or not, with or without a last newline", () => {
    const entries = [
      ["pet", "dog:0.5"],
      ["hot dog", "frankfurter:0.6"],
      ["a", ""],
      ["zebra", "z"],
      ["hot", "warm"],
    ] as const;
    const text = entries.map(([k, v]) => `${k}\t${v}`).join("\n");
    for (const t of [sortedLines(text), sortedLines(`${text}\n`)]) {
      for (const [k, v] of entries) expect(lookUp(t, k)).toBe(v);
      for (const missing of ["", "ho", "hot d", "pets", "zz", "\t"])
        expect(lookUp(t, missing)).toBeUndefined();
    }
    expect(lookUp(sortedLines(""), "a")).toBeUndefined();
  });
});

describe("the tables memctx ships", () => {
  it("are in key order, so that search need not check them at each start", () => {
    const unsorted = shippedLines("pet\tdog\nhot\twarm\n");
    expect(inOrder(unsorted)).toBe(false); // the check below can fail
    for (const table of [STEM_RANKS, packageUrl("assets/wordnet-expansions.tsv")]) {
      const t = shippedLines(readFileSync(table, "utf8"));
      expect(t.starts.length, String(table)).toBeGreaterThan(10_000);
      expect(inOrder(t), String(table)).toBe(true);
    }
  });
});
