import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { matchesOwnText } from "../../../src/engine/memory/forget.js";
import { supersedes } from "../../../src/engine/memory/relations.js";
import { eventually } from "../../support/wait.js";
import { addFacts, openTestEngine, type TestEngine } from "./harness.js";

// `t` takes facts through the dreamer's commit (no workers); `w` processes documents (one worker).
let t: TestEngine;
let w: TestEngine;
beforeEach(async () => {
  t = await openTestEngine();
  w = await openTestEngine({ workers: 1 });
});
afterEach(async () => {
  await t.close();
  await w.close();
});

type Listed = { id: string; memory: string; isLatest: boolean };
const listAll = async (ns: string, e: TestEngine = t) =>
  (await e.call("POST", `/ns/${ns}/list/memories?limit=100`, { include: { forgotten: true } })).body
    .memories as Listed[];

/** Adds a conversation document with instant dreaming (the offline extractor) and waits for its memories. */
async function converse(ns: string, content: string, date?: string): Promise<void> {
  const res = await w.call("POST", `/ns/${ns}/document?dreaming=instant`, {
    content,
    ...(date ? { date } : {}),
  });
  expect(res.status).toBe(200);
  await eventually(async () => {
    const doc = await w.call("GET", `/ns/${ns}/document/${res.body.id}`);
    return doc.body.system?.status === "done" && doc.body.system?.dreamingStatus === "done"
      ? true
      : undefined;
  }, "the document's memories");
}

describe("superseding only what is superseded", () => {
  const state = { isStatic: true, eventDate: null, attribute: "home" };
  const older = { is_static: 1, event_date: null, attribute: "home" };

  it("retires a state fact of a single-valued attribute told by the same speaker", () => {
    expect(supersedes({ ...state, speaker: "alice" }, { ...older, speaker: "alice" })).toBe(true);
    expect(supersedes({ ...state, attribute: "work" }, { ...older, attribute: "work" })).toBe(true);
    expect(supersedes({ ...state, attribute: "likes_jazz" }, { ...older, attribute: "likes_jazz" })).toBe(
      true,
    );
  });

  it("never across speakers, never between dated events, never for attributes that add up", () => {
    expect(supersedes({ ...state, speaker: "bob" }, { ...older, speaker: "alice" })).toBe(false);
    expect(supersedes({ ...state, eventDate: "2023-05-07" }, older)).toBe(false);
    expect(supersedes(state, { ...older, event_date: "2023-05-01" })).toBe(false);
    expect(supersedes({ ...state, isStatic: false }, older)).toBe(false);
    expect(supersedes({ ...state, attribute: "pet" }, { ...older, attribute: "pet" })).toBe(false);
    expect(supersedes({ ...state, attribute: "children" }, { ...older, attribute: "children" })).toBe(false);
  });

  it("keeps a second pet and a dated event, and retires an old home, through the dreamer", async () => {
    await addFacts(t, "zoe", [
      { memory: "Zoe has a dog named Rex.", isStatic: true, subject: "zoe", attribute: "pet" },
      { memory: "Zoe lives in Oslo.", isStatic: true, subject: "zoe", attribute: "home" },
      {
        memory: "Zoe started a new job at the bakery on 3 March 2023.",
        isStatic: true,
        subject: "zoe",
        attribute: "work",
        eventDate: "2023-03-03",
      },
    ]);
    await addFacts(t, "zoe", [
      { memory: "Zoe has a cat named Mimi.", isStatic: true, subject: "zoe", attribute: "pet" },
      { memory: "Zoe lives in Bergen.", isStatic: true, subject: "zoe", attribute: "home" },
      {
        memory: "Zoe quit the bakery job on 9 June 2023.",
        isStatic: true,
        subject: "zoe",
        attribute: "work",
        eventDate: "2023-06-09",
      },
    ]);
    const byText = new Map((await listAll("zoe")).map((m) => [m.memory, m.isLatest]));
    expect(byText.get("Zoe has a dog named Rex.")).toBe(true);
    expect(byText.get("Zoe has a cat named Mimi.")).toBe(true);
    expect(byText.get("Zoe started a new job at the bakery on 3 March 2023.")).toBe(true);
    expect(byText.get("Zoe quit the bakery job on 9 June 2023.")).toBe(true);
    expect(byText.get("Zoe lives in Oslo.")).toBe(false);
    expect(byText.get("Zoe lives in Bergen.")).toBe(true);
    // Search answers with the current home; the old one is its history ("where did Zoe live
    // before?" reads it from the hit's parents), not a hit of its own.
    const found = await t.call("POST", "/ns/zoe/search", {
      query: "Where did Zoe live?",
      searchMode: "memories",
      include: { related: true },
    });
    const hits = found.body.results as {
      memory: string;
      included?: { related?: { parents: { memory: string }[] } };
    }[];
    expect(hits.map((h) => h.memory)).not.toContain("Zoe lives in Oslo.");
    const bergen = hits.find((h) => h.memory === "Zoe lives in Bergen.");
    expect(bergen?.included?.related?.parents.map((p) => p.memory)).toEqual(["Zoe lives in Oslo."]);
  });

  it("does not let one speaker's statement retire another's in a conversation", async () => {
    // Same subject (ben), same attribute (work), both state facts: only the speakers differ.
    await converse("pair", "Ana: Ben works as a nurse at the clinic.\nBen: Ha, not anymore.", "2023-05-01");
    await converse("pair", "Ben: I work as a teacher at the high school now.\nAna: Cool.", "2023-06-01");
    const all = await listAll("pair", w);
    expect(all.find((m) => m.memory.includes("nurse"))?.isLatest).toBe(true);
    expect(all.find((m) => m.memory.includes("teacher"))?.isLatest).toBe(true);
  });
});

describe("forgetting by meaning matches the memory's own words", () => {
  it("scores the memory's own text, not the turns around it", () => {
    expect(matchesOwnText("dark roast coffee", "Alice drinks dark roast coffee every morning.")).toBe(true);
    expect(matchesOwnText("dark roast coffee", "Alice's sister lives in Berlin.")).toBe(false);
    expect(matchesOwnText("dark roast coffee", "Alice likes coffee.")).toBe(false);
  });

  it("leaves a neighbouring turn's memory alone", async () => {
    await converse(
      "cafe",
      [
        "Alice: I drink dark roast coffee every single morning.",
        "Bob: Where does your sister get her dark roast coffee?",
        "Alice: My sister Emma lives in Berlin, near a great coffee roaster.",
      ].join("\n"),
      "2023-05-01",
    );
    const res = await w.call("DELETE", "/ns/cafe/memories/semantic", {
      query: "dark roast coffee",
      dryRun: true,
    });
    expect(res.status).toBe(200);
    const matched = (res.body.matches as { memory: string }[]).map((m) => m.memory);
    expect(matched.some((m) => m.includes("dark roast coffee"))).toBe(true);
    expect(matched.filter((m) => m.includes("Berlin"))).toEqual([]);
  });
});

describe("a dynamic profile that is dynamic", () => {
  it("files tonight's concert under dynamic, where the user lives under static", async () => {
    await converse("me", "user: I have a concert tonight. I live in Lisbon.", "2023-05-01T18:00:00Z");
    const { profile } = (await w.call("POST", "/ns/me/profile", {})).body;
    const dynamic = (profile.dynamic as { memory: string }[]).map((m) => m.memory).join(" | ");
    const stat = (profile.static as { memory: string }[]).map((m) => m.memory).join(" | ");
    expect(dynamic).toMatch(/concert tonight/);
    expect(stat).not.toMatch(/concert/);
  });

  it("files it as dynamic without a document date too", async () => {
    await converse("me2", "user: I have a concert tonight.");
    const { profile } = (await w.call("POST", "/ns/me2/profile", {})).body;
    expect((profile.dynamic as { memory: string }[]).map((m) => m.memory).join(" ")).toMatch(/concert/);
  });
});
