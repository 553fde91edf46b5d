/**
 * The bench's side-by-side with the reference server: whatever the budget leaves, both systems
 * answer the same questions (a quick run on a fresh clone once spent its whole budget fetching the
 * reference and showed memctx's row alone).
 */
import { describe, expect, it } from "vitest";
import { Budget } from "../../bench/suite/common.js";
import { askInTurn } from "../../bench/suite/side-by-side.js";

describe("the side-by-side's questions", () => {
  it("go to every system in turn, so a budget cut leaves the rows with the same questions", async () => {
    let clock = 0;
    const budget = new Budget(10, () => clock);
    const asked = { memctx: [] as number[], reference: [] as number[] };
    const n = await askInTurn([1, 2, 3, 4, 5, 6], budget, [
      async (q) => {
        asked.memctx.push(q);
      },
      async (q) => {
        asked.reference.push(q);
        clock += 4_000; // the slow one spends the budget
      },
    ]);
    expect(n).toBe(3);
    expect(asked.memctx).toEqual([1, 2, 3]);
    expect(asked.reference).toEqual([1, 2, 3]);
    expect(budget.stopped).toBe(true);
  });

  it("starts the budget when the budget is made, so what runs before it is not counted", async () => {
    let clock = 0;
    clock += 60_000; // a first download of the reference server, before the budget
    const budget = new Budget(45, () => clock);
    const asked: number[] = [];
    await askInTurn([1, 2], budget, [
      async (q) => {
        asked.push(q);
      },
    ]);
    expect(asked).toEqual([1, 2]);
    expect(budget.stopped).toBe(false);
  });
});
