import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { serverPerFile } from "../../support/harness.js";
import { eventually } from "../../support/wait.js";

/**
 * Issue 27, extraction: corrections supersede, other people's facts stay theirs, and a reference
 * document gives its salient facts with their context. Through the HTTP API of a real server on
 * 127.0.0.1, offline extractor, instant dreaming (status done means memories stored).
 */

type Mem = {
  id: string;
  memory: string;
  isLatest?: boolean;
  version?: number;
  parentMemoryId?: string | null;
};

describe("faithful extraction through the HTTP API", () => {
  const { server } = serverPerFile({ workers: 1 });
  const t = {
    // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field
    call: async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
      const res = await server.call(method, path, body === undefined ? {} : { body });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };

  /** Adds a document, waits until it is done, returns its memories. */
  async function add(ns: string, content: string, date = "2026-11-20"): Promise<Mem[]> {
    const res = await t.call("POST", `/ns/${ns}/document?dreaming=instant`, { content, date });
    expect(res.status).toBe(200);
    return await eventually(async () => {
      const d = (await t.call("GET", `/ns/${ns}/document/${res.body.id}?include=memories`)).body;
      return d.system.status === "done" && d.system.dreamingStatus === "done"
        ? (d.memories as Mem[])
        : undefined;
    }, "document done");
  }

  async function memory(ns: string, id: string): Promise<Mem> {
    return (await t.call("GET", `/ns/${ns}/memories/${id}`)).body as Mem;
  }

  async function profileText(ns: string): Promise<string[]> {
    const { profile } = (await t.call("POST", `/ns/${ns}/profile`, {})).body;
    return [...profile.static, ...profile.dynamic].map((m: { memory: string }) => m.memory);
  }

  // Each correction is said in another way; the old value must leave the profile and stay in history.
  const corrections: { name: string; before: string; after: string; old: RegExp; current: RegExp }[] = [
    {
      name: "actually ... not X anymore, over a dated event",
      before: "user: I moved to Porto in 2023.",
      after: "user: Actually I moved to Braga in 2025, not Porto anymore.",
      old: /Porto/,
      current: /Braga/,
    },
    {
      name: "a current state said with 'now', over a dated move",
      before: "user: We moved to Porto in 2023.",
      after: "user: I live in Madrid now.",
      old: /Porto/,
      current: /Madrid/,
    },
    {
      name: "switched from X to Y",
      before: "user: I use Android on my phone.",
      after: "user: I switched from Android to an iPhone last month.",
      old: /Android on/,
      current: /iPhone/,
    },
    {
      name: "no longer",
      before: "user: I am vegetarian.",
      after: "user: I'm no longer vegetarian, I eat fish again.",
      old: /is vegetarian/,
      current: /fish/,
    },
    {
      name: "cancelled X",
      before: "user: I have a gym membership at FitHub.",
      after: "user: I cancelled my gym membership at FitHub.",
      old: /has a gym membership/,
      current: /cancelled/,
    },
    {
      name: "correction: ..., not X",
      before: "user: My dentist appointment is at 3 pm on Friday.",
      after: "user: Correction: my dentist appointment is at 5 pm, not 3 pm.",
      old: /3 pm on Friday/,
      current: /5 pm/,
    },
    {
      name: "don't ... anymore, with the new value after it",
      before: "user: I work at Globex as a data engineer.",
      after: "user: I don't work at Globex anymore, I joined Initech in October.",
      old: /works at Globex/,
      current: /Initech/,
    },
  ];

  for (const [i, c] of corrections.entries()) {
    it(`supersedes the corrected memory (${c.name}): the old one is history, not in the profile`, async () => {
      const ns = `correct-${i}`;
      const [old] = (await add(ns, c.before, "2026-10-01")).filter((m) => c.old.test(m.memory));
      expect(old, "the first fact is stored").toBeDefined();
      const after = await add(ns, c.after);
      const current = after.find((m) => c.current.test(m.memory));
      expect(current, JSON.stringify(after)).toBeDefined();
      const read = await memory(ns, current!.id);
      expect(read.parentMemoryId).toBe(old!.id);
      expect(read.version).toBe(2);
      expect((await memory(ns, old!.id)).isLatest).toBe(false);
      const profile = await profileText(ns);
      expect(profile.some((m) => c.current.test(m))).toBe(true);
      expect(profile.some((m) => c.old.test(m))).toBe(false);
    });
  }

  it("does not read every 'actually' or 'not' as a correction", async () => {
    const ns = "not-corrections";
    await add(ns, "user: I live in Lisbon.", "2026-10-01");
    const after = await add(
      ns,
      [
        "user: Actually, I went to a concert in Porto yesterday. My sister does not live in Lisbon.",
        "user: My brother lives in Madrid now.",
      ].join("\n"),
    );
    expect(after.length).toBeGreaterThan(0);
    const profile = await profileText(ns);
    expect(profile).toContain("The user lives in Lisbon.");
  });

  it("files other people's facts under them, resolving a pronoun only to the person it stands for", async () => {
    const ns = "people";
    const memories = await add(
      ns,
      [
        "user: Lena Fischer joined our team last week. She prefers async code reviews.",
        "user: I prefer pairing in person.",
        "user: My manager Tom Becker lives in Denver. He loves trail running.",
        "user: I prefer dark roast coffee and my sister Maya lives in Lisbon.",
      ].join("\n"),
    );
    const texts = memories.map((m) => m.memory);
    expect(texts).toContain("Lena Fischer prefers async code reviews.");
    expect(texts.some((m) => /^Tom Becker, the user's manager, loves trail running/.test(m))).toBe(true);
    expect(texts).toContain("The user prefers dark roast coffee.");
    expect(texts.some((m) => /^The user's sister Maya lives in Lisbon/.test(m))).toBe(true);
    // Nothing about Lena, Tom or Maya is told as the user's, nor as another person's.
    expect(
      texts.filter((m) => /^The user (?:said|prefers|loves)/.test(m) && /async|trail|Lisbon/.test(m)),
    ).toEqual([]);
    expect(texts.filter((m) => /^Lena Fischer loves trail/.test(m))).toEqual([]);
    // The other people's preferences do not replace the user's own.
    const user = await t.call("POST", `/ns/${ns}/search`, {
      query: "pairing in person",
      searchMode: "memories",
    });
    const hit = user.body.results.find((r: { memory?: string }) => /pairing/.test(r.memory ?? ""));
    expect(hit).toBeDefined();
    expect((await memory(ns, hit.id)).isLatest).toBe(true);
  });

  it("keeps other people's facts out of the user's profile, and finds them in search", async () => {
    const ns = "whose";
    await add(ns, "My colleague Lena Fischer prefers async code reviews. I love jazz.");
    await add(ns, "Our CTO, Priya Raman, prefers Go over Rust.");
    await add(
      ns,
      [
        "user: I prefer pairing in person.",
        "user: My husband enjoys hiking.",
        "user: Jonas Weber loves early stand-ups.",
        "assistant: Noted!",
      ].join("\n"),
    );
    const { profile } = (await t.call("POST", `/ns/${ns}/profile`, {})).body;
    const lines = [...profile.static, ...profile.dynamic, ...profile.buckets.preferences].map(
      (m: { memory: string }) => m.memory,
    );
    expect(lines.some((m) => /jazz/.test(m))).toBe(true);
    expect(lines.some((m) => /pairing in person/.test(m))).toBe(true);
    expect(lines.filter((m) => /Lena|Priya|husband|hiking|Jonas|async|Go over Rust/.test(m))).toEqual([]);
    // Theirs, not lost: each is a memory search finds.
    for (const [query, said] of [
      ["async code reviews", /Lena Fischer prefers async code reviews/],
      ["Go or Rust", /Priya Raman/],
      ["hiking", /husband enjoys hiking/],
      ["stand-ups", /Jonas Weber loves early stand-ups/],
    ] as const) {
      const found = await t.call("POST", `/ns/${ns}/search`, { query, searchMode: "memories" });
      expect(
        found.body.results.some((r: { memory: string }) => said.test(r.memory)),
        query,
      ).toBe(true);
    }
  });

  it("draws a few memories about a 19 KB manual itself, none of its furniture, and keeps its passages searchable", async () => {
    const manual = readFileSync(new URL("../../fixtures/harbor-queue-manual.md", import.meta.url), "utf8");
    expect(manual.length).toBeGreaterThan(18_000);
    const memories = (await add("manual", manual, "2026-03-15")).map((m) => m.memory);
    // A few, about the manual's subject: what it is, who publishes it, what was decided.
    expect(memories.length).toBeGreaterThanOrEqual(3);
    expect(memories.length).toBeLessThanOrEqual(12);
    for (const m of memories) {
      // No table of contents, reference list, page furniture, list item or code.
      expect(m).not.toMatch(
        /\.{4,}|Page \d+ of \d+|Kleppmann|O'Reilly|NetDB|mentioned in Section|see Section|`|^\W/i,
      );
      expect(m).not.toMatch(/^The user\b|\bthe user and others\b/);
    }
    expect(memories.some((m) => /durable message queue/.test(m))).toBe(true);
    // Its details are found in its passages.
    for (const [query, holds] of [
      ["how long are messages kept by default", /seven days/],
      ["how many partitions can a topic have", /256 partitions/],
    ] as const) {
      const res = await t.call("POST", "/ns/manual/search", { query, searchMode: "chunks", limit: 3 });
      expect(JSON.stringify(res.body.results), query).toMatch(holds);
    }
  });

  it("tells a record's fields with the record they belong to", async () => {
    const memories = (
      await add(
        "postmortems",
        [
          "# Payments postmortems",
          "",
          "## Incident 2025-07: duplicate payment events",
          "",
          "Owner: Tomasz Nowak.",
          "Root cause: missing idempotency key in the consumer.",
          "",
          "## Incident 2025-11: broker disk full",
          "",
          "Owner: Priya Raman.",
          "Root cause: retention was disabled on the clickstream topic.",
          "",
          "## Decision log",
          "",
          "Decision: every consumer stores an idempotency key from 2026 on.",
        ].join("\n"),
      )
    ).map((m) => m.memory);
    expect(memories.find((m) => m.includes("Tomasz Nowak"))).toMatch(
      /Incident 2025-07: duplicate payment events/,
    );
    expect(memories.find((m) => m.includes("missing idempotency key"))).toMatch(/Incident 2025-07/);
    expect(memories.find((m) => m.includes("Priya Raman"))).toMatch(/Incident 2025-11: broker disk full/);
    expect(memories.find((m) => m.includes("retention was disabled"))).toMatch(/Incident 2025-11/);
  });
});
