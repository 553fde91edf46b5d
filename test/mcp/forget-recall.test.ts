import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, connect, type Session, startEngine, structured, type TestEngine, text } from "./helpers.js";

/**
 * Forget means gone from recall, as an agent sees it through the MCP tools (the real SDK client):
 * after `forget`, neither `search` (its nearest matches included), `get_profile` nor `list` of
 * chunks shows the forgotten fact, while the rest of what the user said is still recalled.
 */

let t: TestEngine;
beforeAll(async () => {
  t = await startEngine();
});
afterAll(() => t.close());

interface SearchOut {
  results: { text: string; source: { title: string | null } }[];
}

/** What a search shows (each result's text and source title), not its header echoing the query. */
async function searched(s: Session, args: Record<string, unknown>): Promise<string> {
  const out = structured<SearchOut>(await call(s.mcp, "search", args));
  return out.results.map((r) => `${r.text} (from ${r.source.title ?? ""})`).join("\n");
}

/** Every text the agent can recall about `query`: search (default threshold, then nearest), profile, chunks. */
async function recalled(s: Session, query: string): Promise<string> {
  const parts = [
    await searched(s, { query }),
    await searched(s, { query, mode: "chunks" }),
    await searched(s, { query, mode: "memories", threshold: 0 }),
    text(await call(s.mcp, "get_profile")),
    text(await call(s.mcp, "list", { type: "chunks", limit: 100 })),
    text(await call(s.mcp, "list", { type: "memories", limit: 100 })),
  ];
  return parts.join("\n");
}

async function liveMemories(namespace: string) {
  return (await t.client.ns(namespace).memories.list({ limit: 100 })).memories;
}

describe("forget through the MCP tools", () => {
  it("forget with ids: the fact is gone from search, nearest matches, the profile and the passages; the rest stays", async () => {
    const s = await connect({ client: t.client, namespace: "mcp-ids" });
    try {
      structured(
        await call(s.mcp, "add_memory", {
          content:
            "I prefer dark roast coffee and my sister Maya lives in Lisbon. I run the Thursday book club at the library.",
          wait: true,
        }),
      );
      expect(await recalled(s, "what coffee do I like")).toMatch(/dark roast/);
      const coffee = (await liveMemories("mcp-ids")).filter((m) => /coffee/.test(m.memory));
      expect(coffee.length).toBeGreaterThan(0);

      const res = await call(s.mcp, "forget", { ids: coffee.map((m) => m.id) });
      expect(structured<{ forgotten: number }>(res).forgotten).toBe(coffee.length);
      // The result says what forgetting did.
      expect(text(res)).toMatch(/no longer recall/);
      expect(text(res)).toMatch(/documents stay stored/);

      const after = await recalled(s, "what coffee do I like");
      expect(after).not.toMatch(/roast|coffee/i);
      // Asking with the very words finds nothing, not even as a weaker "nearest" match.
      const exact = await searched(s, { query: "dark roast coffee" });
      expect(exact).not.toMatch(/roast/);
      const club = await searched(s, { query: "book club at the library" });
      expect(club).toMatch(/Thursday book club/);
    } finally {
      await s.close();
    }
  });

  it("forget by query, confirmed by the user: a transcript's turn leaves recall, the other turns stay", async () => {
    const s = await connect({ client: t.client, namespace: "mcp-query" }, { elicitation: {} }, (c) =>
      c.setRequestHandler(ElicitRequestSchema, async () => ({
        action: "accept",
        content: { confirm: true },
      })),
    );
    try {
      let documentId = "";
      for (const [role, content] of [
        ["user", "My locker combination at the gym is 31-7-22."],
        ["assistant", "Got it, I will remember that."],
        ["user", "I swim on Tuesday mornings before work."],
      ] as const) {
        const added = structured<{ id: string }>(
          await call(s.mcp, "add_memory", { content, role, conversationId: "gym-chat", wait: true }),
        );
        documentId = added.id;
      }
      expect(await recalled(s, "locker combination")).toMatch(/31-7-22/);

      const res = await call(s.mcp, "forget", { query: "locker combination at the gym" });
      expect(structured<{ forgotten: number }>(res).forgotten).toBeGreaterThan(0);

      const after = await recalled(s, "locker combination");
      expect(after).not.toMatch(/31-7-22|locker/i);
      expect(await searched(s, { query: "swim Tuesday mornings" })).toMatch(/swims? on Tuesday/);
      // The transcript itself is the user's: still stored as sent.
      const doc = await t.client.ns("mcp-query").documents.get(documentId);
      expect(doc.content).toMatch(/31-7-22/);
    } finally {
      await s.close();
    }
  });
});
