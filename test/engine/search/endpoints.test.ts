import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SearchBody } from "../../../src/api/search.js";
import { anchorQueries, endPointQueries, mergeBest } from "../../../src/engine/search/endpoints.js";
import { search } from "../../../src/engine/search/search.js";
import { TestStore } from "./store.js";

describe("endPointQueries: the two events of a question about the time between them", () => {
  it("reads 'between X and Y' and 'from X until Y', completing a shortened second end point", () => {
    expect(endPointQueries("How many weeks passed between Zoe adopting Rex and Bella?")).toEqual([
      "Zoe adopting Rex",
      "Zoe adopting Bella",
    ]);
    expect(endPointQueries("How much time passed between the trip to Oslo and Priya's wedding?")).toEqual([
      "the trip to Oslo",
      "Priya's wedding",
    ]);
    expect(endPointQueries("How many months from the launch until the first sale?")).toEqual([
      "the launch",
      "the first sale",
    ]);
  });

  it("reads 'how long after/before X did Y', the subject going with both", () => {
    expect(endPointQueries("How long after the move did Zoe find a job?")).toEqual([
      "Zoe the move",
      "Zoe find a job",
    ]);
    expect(endPointQueries("How many days was the concert before the wedding?")).toEqual([
      "the concert",
      "the wedding",
    ]);
  });

  it("asks nothing of questions with one end point or no duration", () => {
    expect(endPointQueries("How long has Zoe been painting?")).toEqual([]);
    expect(endPointQueries("How long ago did Zoe move to Oslo?")).toEqual([]);
    expect(endPointQueries("What happened between the trip and the wedding?")).toEqual([]);
  });

  it("mergeBest keeps each hit once, at its better similarity, best first", () => {
    const hit = (rowid: number, similarity: number, corpus = "memories") => ({
      scored: { corpus, rowid, similarity },
    });
    const out = mergeBest([hit(1, 0.9), hit(2, 0.4), hit(2, 0.5, "chunks")], [hit(2, 0.7), hit(3, 0.2)]);
    expect(out.map((i) => [i.scored.corpus, i.scored.rowid, i.scored.similarity])).toEqual([
      ["memories", 1, 0.9],
      ["memories", 2, 0.7],
      ["chunks", 2, 0.5],
      ["memories", 3, 0.2],
    ]);
  });
});

describe("anchorQueries: two events that bound the span a question asks about", () => {
  it("reads 'between X and Y' of events, with the people named outside them", () => {
    expect(anchorQueries("What did Zoe do between the trip and the wedding?")).toEqual([
      "Zoe the trip",
      "Zoe the wedding",
    ]);
    expect(anchorQueries("Which books did Omar read between his surgery and the marathon?")).toEqual([
      "Omar his surgery",
      "Omar the marathon",
    ]);
  });

  it("leaves duration questions, people and dates to the other rules", () => {
    expect(anchorQueries("How long was it between the trip and the wedding?")).toEqual([]);
    expect(anchorQueries("What was discussed between John and Tim?")).toEqual([]);
    expect(anchorQueries("What did Zoe do between March and June 2023?")).toEqual([]);
    expect(anchorQueries("Where was John between August 11 and August 15?")).toEqual([]);
    expect(anchorQueries("What did Zoe do after the trip?")).toEqual([]);
    expect(anchorQueries("What's the difference between a latte and a cappuccino?")).toEqual([]);
    expect(anchorQueries("What was the difference between the first draft and the second?")).toEqual([]);
    expect(anchorQueries("Which has more caffeine, between tea and coffee?")).toEqual([]);
    expect(anchorQueries("Did Zoe have to choose between the red dress and the blue one?")).toEqual([]);
    expect(anchorQueries("What happened between Zoe and her sister?")).toEqual([]);
    expect(anchorQueries("What is the link between the trip and the wedding?")).toEqual([]);
    expect(anchorQueries("What happened between the trip and the wedding?")).toEqual([
      "the trip",
      "the wedding",
    ]);
  });
});

describe("search ranks what happened between two events the question names", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await TestStore.open();
  });
  afterEach(async () => await store.close());

  it("above what happened before or after them", async () => {
    const ns = await store.namespace("zoe");
    const trip = await store.memory(ns, "Zoe came back from a trip to Lisbon (10 March 2024).", {
      eventDate: "2024-03-10",
    });
    const wedding = await store.memory(ns, "Zoe's brother's wedding was lovely (8 June 2024).", {
      eventDate: "2024-06-08",
    });
    // Each does something once; only the pottery class falls between the two events.
    await store.memory(ns, "Zoe went skiing in the Alps (20 January 2024).", { eventDate: "2024-01-20" });
    const pottery = await store.memory(ns, "Zoe started a pottery class (15 April 2024).", {
      eventDate: "2024-04-15",
    });
    const piano = await store.memory(ns, "Zoe started piano lessons (1 August 2024).", {
      eventDate: "2024-08-01",
    });
    await store.memory(ns, "Zoe went to a jazz concert (5 October 2023).", { eventDate: "2023-10-05" });
    const ranked = async (query: string) =>
      (
        await search(
          { db: store.db },
          ns,
          SearchBody.parse({ query, searchMode: "memories", limit: 10, threshold: 0 }),
        )
      ).results.map((h) => h.id);
    const ids = await ranked("What did Zoe do between the trip and the wedding?");
    expect(ids.slice(0, 3).sort()).toEqual([trip, wedding, pottery].sort());
    // Without the two events the piano lessons, after them, rank above the pottery class.
    const plain = await ranked("What did Zoe do?");
    expect(plain.indexOf(piano)).toBeLessThan(plain.indexOf(pottery));
  });
});

describe("search brings back both end points of 'how long between'", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await TestStore.open();
  });
  afterEach(async () => await store.close());

  it("in the top 3, where the whole question ranks words about weeks and adopting first", async () => {
    const ns = await store.namespace("zoe");
    const rex = await store.memory(ns, "Zoe adopted Rex, a beagle puppy, from the shelter (3 March 2023).", {
      eventDate: "2023-03-03",
    });
    const bella = await store.memory(ns, "Bella came home with Zoe (17 March 2023).", {
      eventDate: "2023-03-17",
    });
    // Distractors that share the question's other words.
    await store.memory(ns, "Weeks passed before Zoe felt at home in the new flat.");
    await store.memory(ns, "Zoe is thinking about adopting a cat in a few weeks.");
    await store.memory(ns, "Zoe said weeks passed quickly while adopting a new running plan.");
    await store.memory(ns, "Adopting a pet takes weeks of paperwork, Zoe said.");
    const top3 = async (query: string) =>
      (
        await search({ db: store.db }, ns, SearchBody.parse({ query, searchMode: "memories", limit: 3 }))
      ).results.map((h) => h.id);
    const ids = await top3("How many weeks passed between Zoe adopting Rex and Bella?");
    expect(ids).toContain(rex);
    expect(ids).toContain(bella);
  });
});
