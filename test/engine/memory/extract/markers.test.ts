/** Markers said around a fact (extract/markers.ts): left out of it, whatever side they are on. */
import { describe, expect, it } from "vitest";
import { markerSpans } from "../../../../src/engine/memory/extract/markers.js";

const without = (text: string) => {
  let out = text;
  for (const s of [...markerSpans(text)].reverse()) out = out.slice(0, s.start) + out.slice(s.end);
  return out;
};

describe("markers around a fact", () => {
  it("are left out at the start and at the end, with their comma", () => {
    expect(without("By the way, I'm vegetarian.")).toBe("I'm vegetarian.");
    expect(without("I'm vegetarian, by the way.")).toBe("I'm vegetarian.");
    expect(without("Honestly I love jazz.")).toBe("I love jazz.");
    expect(without("I'm Ana Ribeiro, nice to meet you.")).toBe("I'm Ana Ribeiro.");
  });

  it("stay when they are all there is, or part of the fact", () => {
    expect(without("By the way.")).toBe("By the way.");
    expect(without("The way to the station is closed.")).toBe("The way to the station is closed.");
  });
});
