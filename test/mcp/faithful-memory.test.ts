import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../support/wait.js";
import { call, connect, type Session, startEngine, structured, type TestEngine, text } from "./helpers.js";

/**
 * Issue 27, extraction, as an agent sees it through the MCP tools (real SDK client): a correction
 * replaces what the profile says, another person's preference is theirs, and a sentence holding
 * two facts about two people gives two memories.
 */
describe("faithful memory through the MCP tools", () => {
  let t: TestEngine;
  let s: Session;
  beforeAll(async () => {
    t = await startEngine();
    s = await connect({ client: t.client, namespace: "faithful" });
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  async function remember(content: string, date: string) {
    const added = structured<{ id: string }>(await call(s.mcp, "add_memory", { content, date }));
    // Memories are ready once the document is dreamed.
    await until(
      () => t.client.ns("faithful").documents.get(added.id),
      (doc) => doc.system?.dreamingStatus === "done",
      "the document to be dreamed",
    );
  }

  it("states only the corrected value in the profile, and keeps people's facts apart", async () => {
    await remember("I am vegetarian.", "2026-01-09");
    await remember("I moved to Porto in 2023.", "2026-01-10");
    await remember("Actually I moved to Braga in 2025, not Porto anymore.", "2026-02-10");
    await remember("My colleague Lena Fischer prefers async code reviews.", "2026-02-11");
    await remember("I prefer dark roast coffee and my sister Maya lives in Lisbon.", "2026-02-12");
    const profile = text(await call(s.mcp, "get_profile"));
    expect(profile).toMatch(/moved to Braga in 2025/);
    expect(profile).not.toMatch(/Porto/);
    expect(profile).not.toMatch(/The user prefers async|user said she prefers/);
    // Lena's preference and where Maya lives are theirs: not lines of the user's profile; that
    // Maya is the user's sister is the user's.
    expect(profile).not.toMatch(/Lena Fischer|Lisbon/);
    expect(profile).toMatch(/The user's sister is Maya\./);
    expect(profile).toMatch(/dark roast coffee/);
    const lena = text(await call(s.mcp, "search", { query: "async code reviews" }));
    expect(lena).toMatch(/Lena Fischer prefers async code reviews/);
    const { memories } = (await t.client.ns("faithful").memories.list()) as {
      memories: { memory: string; isLatest?: boolean }[];
    };
    const latest = memories.filter((m) => m.isLatest !== false).map((m) => m.memory);
    expect(latest).toContain("The user prefers dark roast coffee.");
    expect(latest.some((m) => /^The user's sister Maya lives in Lisbon/.test(m))).toBe(true);
    expect(latest.some((m) => /Lena Fischer prefers async code reviews/.test(m))).toBe(true);
    // The Porto memory is no longer latest, kept as the Braga memory's previous version.
    expect(latest.some((m) => /Porto/.test(m))).toBe(false);
    const braga = memories.find((m) => /Braga/.test(m.memory)) as { id: string } | undefined;
    const read = (await t.client.ns("faithful").memories.get(braga!.id)) as {
      version?: number;
      parentMemoryId?: string | null;
    };
    expect(read.version).toBe(2);
    expect(read.parentMemoryId).toBeTruthy();
    const found = text(await call(s.mcp, "search", { query: "where does the user live?" }));
    // The current value ranks above the superseded one (how search ranks the rest is search's).
    expect(found).toMatch(/Braga/);
    if (found.includes("Porto in 2023"))
      expect(found.indexOf("Braga")).toBeLessThan(found.indexOf("Porto in 2023"));
    // Where the user lives ranks above what the user is ("vegetarian" is no kind of home).
    if (found.includes("vegetarian"))
      expect(found.indexOf("Braga")).toBeLessThan(found.indexOf("vegetarian"));
  });
});
