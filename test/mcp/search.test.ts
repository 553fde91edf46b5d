import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { excerpt, NEAREST_TEXT_MAX } from "../../src/mcp/tools/search.js";
import { call, connect, type Session, startEngine, structured, type TestEngine, text } from "./helpers.js";

interface SearchOut {
  results: {
    kind: string;
    id: string;
    text: string;
    age: string | null;
    date: string | null;
    source: { documentId: string | null; title: string | null; url: string | null };
  }[];
  found: number;
  truncated: boolean;
}

describe("search", () => {
  let t: TestEngine;
  let s: Session;
  beforeAll(async () => {
    t = await startEngine();
    s = await connect({ client: t.client, namespace: "atlas" });
    const facts = [
      {
        content: "The Atlas project launches on 12 May with the Berlin team.",
        metadata: { project: "atlas" },
      },
      {
        content: "The Zephyr project was cancelled after the budget review.",
        metadata: { project: "zephyr" },
      },
    ];
    for (const f of facts) await call(s.mcp, "add_memory", { ...f, wait: true });
    for (let i = 0; i < 12; i++) {
      await call(s.mcp, "add_memory", {
        content: `Launch checklist item ${i}: verify the launch runbook section ${i} with the release captain before the launch window opens.`,
        metadata: { project: "atlas" },
      });
    }
    await call(s.mcp, "add_memory", { content: "Final launch rehearsal is booked.", wait: true });
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  it("finds what was added, saying how old it is and where it came from", async () => {
    const out = structured<SearchOut>(
      await call(s.mcp, "search", { query: "When does Atlas launch?", mode: "chunks" }),
    );
    expect(out.results.length).toBeGreaterThan(0);
    const hit = out.results.find((r) => r.text.includes("Atlas project launches"));
    expect(hit).toBeDefined();
    expect(hit?.age).toMatch(/just now|ago/);
    expect(hit?.source.documentId).toBeTruthy();
  });

  it("renders each result as a line with its age and source", async () => {
    const res = await call(s.mcp, "search", { query: "Atlas launch", mode: "chunks", limit: 3 });
    expect(text(res)).toMatch(/^\d+ results?:/);
    expect(text(res)).toMatch(/\n1\. \[chunk \d\.\d\d, (just now|.+ ago)\] .+\(from .+\)/);
  });

  it("cuts results to the token budget and says so", async () => {
    const full = structured<SearchOut>(
      await call(s.mcp, "search", { query: "launch runbook", mode: "chunks", limit: 20, threshold: 0 }),
    );
    expect(full.results.length).toBeGreaterThan(3);
    const res = await call(s.mcp, "search", {
      query: "launch runbook",
      mode: "chunks",
      limit: 20,
      threshold: 0,
      maxTokens: 80,
    });
    const cut = structured<SearchOut>(res);
    expect(cut.truncated).toBe(true);
    expect(cut.results.length).toBeGreaterThanOrEqual(1);
    expect(cut.results.length).toBeLessThan(full.results.length);
    expect(text(res).length).toBeLessThanOrEqual(80 * 4);
  });

  it("hints at another mode only when nothing was found in a narrower one", async () => {
    const hybrid = text(await call(s.mcp, "search", { query: "zeppelin quarantine xylophone" }));
    expect(hybrid).toMatch(/^Nothing found/);
    expect(hybrid).not.toContain('mode "hybrid"');
    const memories = text(
      await call(s.mcp, "search", { query: "zeppelin quarantine xylophone", mode: "memories" }),
    );
    expect(memories).toContain('mode "hybrid"');
  });

  it("shows the nearest weaker matches, said to be weak, when nothing reaches the default threshold", async () => {
    const diet = await connect({ client: t.client, namespace: "diet" });
    try {
      await call(diet.mcp, "add_memory", {
        content: "I'm allergic to peanuts and shellfish. I cycle to work every day.",
        wait: true,
      });
      // The question shares no word with the fact: under the threshold, but the nearest.
      const res = await call(diet.mcp, "search", { query: "what can't I eat" });
      const out = structured<SearchOut & { nearest: boolean; results: { similarity: number }[] }>(res);
      expect(out.nearest).toBe(true);
      expect(text(res)).toMatch(/^Nothing reached similarity 0\.3; the nearest \d results?, weaker matches/);
      expect(out.results.length).toBeGreaterThan(0);
      expect(out.results.length).toBeLessThanOrEqual(3);
      expect(out.results[0]?.text).toContain("peanuts");
      for (const r of out.results) {
        expect(r.similarity).toBeGreaterThan(0);
        expect(r.similarity).toBeLessThan(0.3);
      }
      // Within a token budget, the longer header included.
      const tight = await call(diet.mcp, "search", { query: "what can't I eat", maxTokens: 60 });
      expect(structured<{ nearest: boolean }>(tight).nearest).toBe(true);
      expect(text(tight).length).toBeLessThanOrEqual(60 * 4);
      // A threshold the caller chose is kept to.
      const strict = await call(diet.mcp, "search", { query: "what can't I eat", threshold: 0.3 });
      expect(text(strict)).toMatch(/^Nothing found.*, or a lower threshold\.$/);
      expect(structured<{ nearest: boolean }>(strict).nearest).toBe(false);
      // A hit over the threshold is answered as before.
      const plain = structured<{ nearest: boolean; results: unknown[] }>(
        await call(diet.mcp, "search", { query: "peanut allergy" }),
      );
      expect(plain.nearest).toBe(false);
      expect(plain.results.length).toBeGreaterThan(0);
    } finally {
      await diet.close();
    }
  });

  it("narrows results with a metadata filter", async () => {
    const out = structured<SearchOut>(
      await call(s.mcp, "search", {
        query: "project",
        mode: "chunks",
        threshold: 0,
        filter: { field: "project", operator: "eq", value: "zephyr" },
      }),
    );
    expect(out.results.length).toBeGreaterThan(0);
    for (const r of out.results) expect(r.text).toContain("Zephyr");
  });

  it("keeps another namespace's content out of this session's search", async () => {
    const other = await connect({ client: t.client, namespace: "elsewhere" });
    try {
      const out = structured<SearchOut>(
        await call(other.mcp, "search", { query: "Atlas launch", threshold: 0 }),
      );
      expect(out.results).toEqual([]);
      expect(text(await call(other.mcp, "search", { query: "Atlas launch" }))).toMatch(/Nothing found/);
    } finally {
      await other.close();
    }
  });
});

describe("lean search results", () => {
  let t: TestEngine;
  let s: Session;
  beforeAll(async () => {
    t = await startEngine();
    s = await connect({ client: t.client, namespace: "lean" });
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  interface LeanOut {
    results: (SearchOut["results"][number] & { source: { passage?: string } })[];
    nearest: boolean;
  }

  it("answers a memory and the passage it came from as one result, the passage as its source", async () => {
    await call(s.mcp, "add_memory", {
      content: "My gym membership PIN is 4417.\nMy sister Ana lives in Porto.\nI am allergic to peanuts.",
      wait: true,
    });
    const res = await call(s.mcp, "search", { query: "What is the gym PIN?" });
    const out = structured<LeanOut>(res);
    const gym = out.results.filter((r) => r.text.includes("gym") || r.source.passage?.includes("gym"));
    expect(gym).toHaveLength(1);
    expect(gym[0]).toMatchObject({ kind: "memory" });
    expect(gym[0]!.source.passage).toMatch(/^My gym membership PIN is \[redacted: PIN\]\./);
    expect(text(res)).toMatch(
      /\n1\. \[memory [\d.]+, just now\] "The user's gym membership PIN .+ \(from ".+": "My gym membership PIN/,
    );
  });

  it("names a conversation's facts by the conversation's day, not by its speakers' roles", async () => {
    await call(s.mcp, "add_memory", {
      content: "I started learning the cello last week.",
      conversationId: "music",
      role: "user",
      date: "2026-03-14",
      wait: true,
    });
    const res = await call(s.mcp, "search", { query: "Which instrument am I learning?" });
    const cello = structured<LeanOut>(res).results.find((r) => r.text.includes("cello"));
    expect(cello?.source.title).toBe("Conversation of 14 March 2026");
    expect(text(res)).toContain('(from "Conversation of 14 March 2026"');
    expect(text(res)).not.toContain("Conversation: user");
  });

  it("answers a question nothing reaches with a few short nearest hits", async () => {
    const week = (n: number) =>
      Array.from(
        { length: n },
        (_, j) => `On day ${j} the team reviewed the roadmap and the budget for the office in Lisbon.`,
      );
    // A store of its own: what the others hold would weigh the query's words otherwise.
    const weekly = await connect({ client: t.client, namespace: "weekly" });
    await call(weekly.mcp, "add_memory", { content: ["Weekly notes.", ...week(8)].join(" "), wait: true });
    const res = await call(weekly.mcp, "search", {
      query: "Lisbon zebra quantum violin harbor glacier saffron tundra marimba origami lantern cobalt",
    });
    await weekly.close();
    const out = structured<LeanOut>(res);
    expect(out.nearest).toBe(true);
    expect(out.results.length).toBeGreaterThan(0);
    for (const r of out.results) {
      expect(r.text.length).toBeLessThanOrEqual(NEAREST_TEXT_MAX);
      expect(r.source.passage).toBeUndefined();
    }
    expect(text(res).length).toBeLessThan(800);
  });

  it("cuts a long weak match around the words it shares with the question", () => {
    const long = `${"The quarterly facilities report covers heating and ventilation. ".repeat(12)}I'm allergic to peanuts and shellfish. ${"Parking permits are renewed in May. ".repeat(8)}`;
    const cut = excerpt(long, "am I allergic to anything?", NEAREST_TEXT_MAX);
    expect(cut.length).toBeLessThanOrEqual(NEAREST_TEXT_MAX);
    expect(cut).toMatch(/^….*allergic to peanuts.*…$/);
    // No shared word: its start.
    const start = excerpt(long, "zebra", 40);
    expect(start.length).toBeLessThanOrEqual(40);
    expect(start).toMatch(/^The quarterly facilities .*…$/);
    expect(excerpt("short", "zebra", 40)).toBe("short");
  });
});
