import { describe, expect, it } from "vitest";
import { lookUp, sortedLines } from "../../../src/engine/text/sorted-lines.js";

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
