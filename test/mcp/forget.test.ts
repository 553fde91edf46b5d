import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, connect, startEngine, structured, type TestEngine, text } from "./helpers.js";

interface ForgetOut {
  forgotten: number;
  matches: { id: string; memory: string }[];
  needsConfirmation: boolean;
}

/** Adds a fact and waits for its memories; answers the ids of live memories mentioning `word`. */
async function remember(t: TestEngine, namespace: string, content: string, word: string) {
  const s = await connect({ client: t.client, namespace });
  try {
    structured(await call(s.mcp, "add_memory", { content, wait: true }));
  } finally {
    await s.close();
  }
  const { memories } = await t.client.ns(namespace).memories.list({ limit: 100 });
  return memories.filter((m) => m.memory.includes(word)).map((m) => m.id);
}

describe("forget", () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(() => t.close());

  it("without elicitation, shows the matches, forgets nothing, and tells how to confirm", async () => {
    const ids = await remember(t, "fallback", "Carol's phone number is 555-0101.", "555");
    expect(ids.length).toBeGreaterThan(0);
    const s = await connect({ client: t.client, namespace: "fallback" });
    try {
      const res = await call(s.mcp, "forget", { query: "Carol's phone number" });
      const out = structured<ForgetOut>(res);
      expect(out).toMatchObject({ forgotten: 0, needsConfirmation: true });
      expect(out.matches.map((m) => m.id)).toEqual(expect.arrayContaining(ids));
      expect(text(res)).toMatch(/Nothing was forgotten yet.*call forget with ids/s);
      const live = await t.client.ns("fallback").memories.list({ limit: 100 });
      expect(live.memories.map((m) => m.id)).toEqual(expect.arrayContaining(ids));

      const confirmed = structured<ForgetOut>(
        await call(s.mcp, "forget", { ids: out.matches.map((m) => m.id) }),
      );
      expect(confirmed.forgotten).toBe(out.matches.length);
      const after = await t.client.ns("fallback").memories.list({ limit: 100 });
      expect(after.memories.map((m) => m.id)).not.toEqual(expect.arrayContaining(ids));
    } finally {
      await s.close();
    }
  });

  it("with elicitation, asks the user and forgets exactly the matches shown once they accept", async () => {
    const ids = await remember(t, "elicit", "Dave's locker combination is 31-7-22.", "locker");
    const asked: string[] = [];
    const s = await connect({ client: t.client, namespace: "elicit" }, { elicitation: {} }, (c) =>
      c.setRequestHandler(ElicitRequestSchema, async (req) => {
        asked.push(req.params.message);
        return { action: "accept", content: { confirm: true } };
      }),
    );
    try {
      const out = structured<ForgetOut>(await call(s.mcp, "forget", { query: "Dave's locker combination" }));
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(/locker/);
      expect(out.needsConfirmation).toBe(false);
      expect(out.forgotten).toBeGreaterThan(0);
      const live = await t.client.ns("elicit").memories.list({ limit: 100 });
      for (const id of ids) expect(live.memories.map((m) => m.id)).not.toContain(id);
      const all = await t.client.ns("elicit").memories.list({ limit: 100 }, { include: { forgotten: true } });
      expect(all.memories.filter((m) => ids.includes(m.id)).every((m) => m.isForgotten)).toBe(true);
    } finally {
      await s.close();
    }
  });

  it("with elicitation, forgets nothing when the user declines", async () => {
    const ids = await remember(t, "decline", "Erin's bank PIN hint is her cat's name.", "PIN");
    const s = await connect({ client: t.client, namespace: "decline" }, { elicitation: {} }, (c) =>
      c.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" })),
    );
    try {
      const res = await call(s.mcp, "forget", { query: "Erin's bank PIN" });
      expect(structured<ForgetOut>(res).forgotten).toBe(0);
      expect(text(res)).toMatch(/did not confirm/);
      const live = await t.client.ns("decline").memories.list({ limit: 100 });
      expect(live.memories.map((m) => m.id)).toEqual(expect.arrayContaining(ids));
    } finally {
      await s.close();
    }
  });

  it("asks for one of ids, a query or documentIds, not two", async () => {
    const s = await connect({ client: t.client, namespace: "both" });
    try {
      const res = await call(s.mcp, "forget", { ids: ["mem_x"], query: "x" });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/exactly one of ids .* query .* documentIds/);
    } finally {
      await s.close();
    }
  });
});

describe("forget with documentIds", () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(() => t.close());

  it("deletes whole documents by id, with the memories only they gave, and reports unknown ids", async () => {
    const s = await connect({ client: t.client, namespace: "docs" });
    try {
      const kept = structured<{ id: string }>(
        await call(s.mcp, "add_memory", { content: "Heidi's office is on the fourth floor.", wait: true }),
      );
      const gone = structured<{ id: string }>(
        await call(s.mcp, "add_memory", { content: "Ivan's parking spot is number 12.", wait: true }),
      );
      const before = await t.client.ns("docs").memories.list({ limit: 100 });
      expect(before.memories.some((m) => m.memory.includes("parking"))).toBe(true);

      const res = await call(s.mcp, "forget", { documentIds: [gone.id, "doc_missing"] });
      const out = structured<ForgetOut & { errors: { id: string; error: string }[] }>(res);
      expect(out).toMatchObject({ forgotten: 1, needsConfirmation: false });
      expect(out.errors).toEqual([{ id: "doc_missing", error: "document not found" }]);
      expect(text(res)).toMatch(
        /^Deleted 1 document and the memories drawn only from them\.\nNot deleted:\n- doc_missing/,
      );

      const docs = await t.client.ns("docs").documents.list();
      expect(docs.documents.map((d) => d.id)).toEqual([kept.id]);
      const after = await t.client.ns("docs").memories.list({ limit: 100 });
      expect(after.memories.some((m) => m.memory.includes("parking"))).toBe(false);
      expect(after.memories.some((m) => m.memory.includes("fourth floor"))).toBe(true);
    } finally {
      await s.close();
    }
  });
});
