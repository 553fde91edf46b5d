import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SearchBody } from "../../../src/api/search.js";
import { search } from "../../../src/engine/search/search.js";
import { boostWindow, inWindow, questionWindow } from "../../../src/engine/search/when.js";
import { TestStore } from "./store.js";

const ref = new Date("2023-10-10T12:00:00Z");

describe("questionWindow: the dates a question asks about", () => {
  it("reads months, years, days and ranges", async () => {
    expect(await questionWindow("What did Zoe build in August 2023?", ref)).toEqual({
      from: "2023-08-01",
      to: "2023-08-31",
    });
    expect(await questionWindow("Which trips did Zoe take in 2022?", ref)).toEqual({
      from: "2022-01-01",
      to: "2022-12-31",
    });
    expect(await questionWindow("What did Zoe cook on 7 May 2023?", ref)).toEqual({
      from: "2023-05-07",
      to: "2023-05-07",
    });
    expect(await questionWindow("What did Zoe read between March and June 2023?", ref)).toEqual({
      from: "2023-03-01",
      to: "2023-06-30",
    });
  });

  it("reads relative windows against the reference date", async () => {
    expect(await questionWindow("Where did Zoe go last spring?", ref)).toEqual({
      from: "2023-03-01",
      to: "2023-05-31",
    });
    expect(await questionWindow("Where did Zoe ski last winter?", ref)).toEqual({
      from: "2022-12-01",
      to: "2023-02-28",
    });
    expect(await questionWindow("What did Zoe fix last week?", ref)).toEqual({
      from: "2023-10-02",
      to: "2023-10-08",
    });
    // A month without a year is the last one up to the reference date.
    expect(await questionWindow("Where did Zoe go in November?", ref)).toEqual({
      from: "2022-11-01",
      to: "2022-11-30",
    });
  });

  it("finds no window in a question without a date", async () => {
    expect(await questionWindow("What may Zoe like?", ref)).toBeNull();
    expect(await questionWindow("Which sun cream does Zoe use?", ref)).toBeNull();
    expect(await questionWindow("How long has Zoe been painting?", ref)).toBeNull();
  });

  it("raises what falls inside and keeps the rest", () => {
    const w = { from: "2023-08-01", to: "2023-08-31" };
    expect(inWindow("2023-08-31", w)).toBe(true);
    expect(inWindow("2023-09-01T00:00:00Z", w)).toBe(false);
    expect(inWindow(null, w)).toBe(false);
    const items = [
      { scored: { similarity: 0.76 }, date: "2023-07-02", id: "july" },
      { scored: { similarity: 0.7 }, date: "2023-08-12", id: "august" },
      { scored: { similarity: 0.6 }, date: null, id: "undated" },
    ];
    const out = boostWindow(items, w);
    expect(out.map((i) => i.id)).toEqual(["august", "july", "undated"]);
    expect(out[0]!.scored.similarity).toBeCloseTo(0.775);
    expect(boostWindow(items, null).map((i) => i.id)).toEqual(["july", "august", "undated"]);
  });
});

describe("search ranks memories dated in the asked window higher", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await TestStore.open();
  });
  afterEach(async () => await store.close());

  it("relative to the namespace's latest document date", async () => {
    const ns = await store.namespace("zoe");
    await store.document(ns, ["Zoe: hello"], { date: "2023-06-20" });
    const july = await store.memory(ns, "Zoe built a wooden birdhouse with her nephew.", {
      eventDate: "2023-06-30",
    });
    const spring = await store.memory(ns, "Zoe built a wooden bench for her garden.", {
      eventDate: "2023-04-15",
    });
    const run = async (query: string) =>
      (
        await search({ db: store.db }, ns, SearchBody.parse({ query, searchMode: "memories", threshold: 0 }))
      ).results.map((h) => h.id);
    expect(await run("What did Zoe build last spring?")).toEqual([spring, july]);
    expect(await run("What did Zoe build in June 2023?")).toEqual([july, spring]);
  });
});
