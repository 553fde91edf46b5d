/**
 * A realistic agent session over the MCP server (the real SDK client, a real engine): turns of
 * the user's life told in a conversation, a change of mind, a forget, a project README; then the
 * profile and a few questions. The memory must be about the user: other people's facts stay
 * theirs, changes replace what they change, sentences read cleanly, and a document the user keeps
 * is one line of the profile, never its contents.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, connect, type Session, startEngine, structured, type TestEngine, text } from "./helpers.js";

const TURNS: [string, string][] = [
  ["2026-03-02", "Hi! I'm Ana Ribeiro, nice to meet you."],
  ["2026-03-02", "I work as a product designer at Lumen Labs in Porto."],
  ["2026-03-02", "My wife is Sofia. She's a marine biologist at the Oceanário."],
  ["2026-03-02", "We have a son, Tomás, who is six."],
  ["2026-03-03", "I drink a cortado every morning before work."],
  ["2026-03-03", "My favourite programming language is TypeScript, and I'm learning Go on weekends."],
  ["2026-03-03", "My colleague Rui Matos leads the mobile team; he prefers pair programming."],
  ["2026-03-04", "We live in Foz, near the beach."],
  ["2026-03-05", "By the way, I'm vegetarian."],
  ["2026-03-06", "I drive a 2015 Renault Clio."],
  ["2026-03-10", "I sold the Clio last week and bought an electric bike."],
  ["2026-03-12", "I left Lumen Labs and joined Northwind as a design lead."],
  ["2026-03-13", "I no longer drink coffee; I switched to green tea."],
  ["2026-03-13", "I'm allergic to peanuts."],
];

describe("a realistic session, remembered about the user", () => {
  let t: TestEngine;
  let s: Session;
  let profile: string;
  beforeAll(async () => {
    t = await startEngine();
    s = await connect({ client: t.client, namespace: "ana" });
    for (const [date, content] of TURNS)
      await call(s.mcp, "add_memory", { content, conversationId: "s1", role: "user", date, wait: true });
    // The user takes something back.
    const { memories } = await t.client.ns("ana").memories.list({ limit: 100 });
    const peanuts = memories.filter((m) => /peanut/.test(m.memory)).map((m) => m.id);
    expect(peanuts).toHaveLength(1);
    await call(s.mcp, "forget", { ids: peanuts });
    const readme = readFileSync(
      new URL("../../bench/agent-session/atlas-readme.md", import.meta.url),
      "utf8",
    );
    await call(s.mcp, "add_memory", { content: readme, date: "2026-03-18", wait: true });
    profile = text(await call(s.mcp, "get_profile"));
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  it("holds who the user is, their current values, and one line for the README", () => {
    for (const fact of [
      "The user's name is Ana Ribeiro.",
      "The user's wife is Sofia.",
      "The user and Sofia live in Foz, near the beach.",
      "The user and Sofia have a son, Tomás, who is six.",
      "The user is vegetarian.",
      "The user's favourite programming language is TypeScript.",
    ])
      expect(profile).toContain(fact);
    expect(profile).toMatch(/joined Northwind as a design lead/);
    expect(profile).toMatch(/switched to green tea/);
    expect(profile).toMatch(/bought an electric bike/);
    expect(profile).toMatch(/Atlas is the batch pipeline/);
  });

  it("keeps other people's facts, replaced values, the forgotten and the README's contents out", () => {
    for (const absent of [
      /Lumen Labs/,
      /cortado/,
      /drives a 2015 Renault Clio/,
      /peanut/i,
      /marine biologist|pair programming|leads the mobile team/,
      /and others/,
      /Dagster|COPY INTO|quarantine|MR !/,
    ])
      expect(profile).not.toMatch(absent);
  });

  it("tells other people's facts as theirs, with who they are, in clean sentences", async () => {
    const { memories } = await t.client.ns("ana").memories.list({ limit: 100 });
    const said = memories.map((m) => m.memory);
    expect(said).toContain("Sofia, the user's wife, is a marine biologist at the Oceanário.");
    expect(said).toContain("Rui Matos, the user's colleague, prefers pair programming.");
    // An earlier version, retired by the green tea, reads as cleanly.
    const every = await t.client.ns("ana").memories.list({ limit: 100 }, { include: { forgotten: true } });
    expect(every.memories.map((m) => m.memory)).toContain("The user no longer drinks coffee.");
    // Two facts told together are two memories.
    expect(said.some((m) => m.startsWith("The user is learning Go on weekends"))).toBe(true);
    for (const m of said) expect(m).not.toMatch(/^By the way|, by the way|\bthe user (?:live|drink|have)\b/);
  });

  it("answers with the current value first", async () => {
    const found = structured<{ results: { text: string }[] }>(
      await call(s.mcp, "search", { query: "What vehicle do I have?", mode: "memories", limit: 3 }),
    );
    expect(found.results[0]?.text).toMatch(/electric bike/);
    expect(found.results.map((r) => r.text).join("\n")).not.toMatch(/drives a 2015 Renault Clio/);
  });
});
