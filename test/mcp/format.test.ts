import { describe, expect, it } from "vitest";
import { age, fitToBudget, truncate } from "../../src/mcp/format.js";

const NOW = Date.parse("2026-05-10T12:00:00Z");

describe("age", () => {
  it("says how long ago, in the largest whole unit", () => {
    expect(age("2026-05-07T12:00:00Z", NOW)).toBe("3 days ago");
    expect(age("2026-05-10T11:59:30Z", NOW)).toBe("just now");
    expect(age("2026-05-10T11:00:00Z", NOW)).toBe("1 hour ago");
    expect(age("2024-02-01", NOW)).toBe("2 years ago");
    expect(age("2026-05-12T12:00:00Z", NOW)).toBe("in 2 days");
  });

  it("has nothing to say about a missing or broken date", () => {
    expect(age(undefined, NOW)).toBeUndefined();
    expect(age("not a date", NOW)).toBeUndefined();
  });
});

describe("fitToBudget", () => {
  const items = ["a".repeat(40), "b".repeat(40), "c".repeat(40)];
  const render = (s: string) => `- ${s}`;
  const cut = (s: string, n: number) => truncate(s, n);

  it("keeps everything without a budget", () => {
    expect(fitToBudget(items, render, cut, undefined)).toEqual({ kept: items, truncated: false });
  });

  it("keeps whole items, in order, while they fit", () => {
    const { kept, truncated } = fitToBudget(items, render, cut, 25); // 100 characters
    expect(kept).toEqual(items.slice(0, 2));
    expect(truncated).toBe(true);
  });

  it("cuts the first item to fit when not even it fits", () => {
    const { kept, truncated } = fitToBudget(items, render, cut, 5); // 20 characters
    expect(kept).toHaveLength(1);
    expect(render(kept[0]!).length).toBeLessThanOrEqual(20);
    expect(kept[0]).toMatch(/…$/);
    expect(truncated).toBe(true);
  });
});
