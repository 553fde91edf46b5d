import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, connect, type Session, startEngine, structured, type TestEngine, text } from "./helpers.js";

describe("get_profile and list", () => {
  let t: TestEngine;
  let s: Session;
  beforeAll(async () => {
    t = await startEngine();
    s = await connect({ client: t.client, namespace: "frank" });
    await call(s.mcp, "add_memory", {
      content: "Frank is a software engineer who lives in Lisbon.",
      wait: true,
    });
    await call(s.mcp, "add_memory", { content: "Frank prefers window seats on flights.", wait: true });
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  it("returns the namespace's static and dynamic facts and buckets", async () => {
    const res = await call(s.mcp, "get_profile");
    const out = structured<{
      namespace: string;
      profile: { static: unknown[]; dynamic: unknown[]; buckets: object };
    }>(res);
    expect(out.namespace).toBe("frank");
    const facts = [...out.profile.static, ...out.profile.dynamic] as { memory: string }[];
    expect(facts.map((f) => f.memory).join("\n")).toMatch(/Lisbon/);
    expect(text(res)).toMatch(/^Profile of namespace frank\nStatic facts/);
  });

  it("names the rule when a bucket name breaks it", async () => {
    const res = await call(s.mcp, "get_profile", { buckets: ["Not Valid"] });
    expect(res.isError).toBe(true);
    expect(text(res)).toMatch(/\^\[a-z0-9\]/);
  });

  it("lists documents with their processing status, page by page", async () => {
    const first = structured<{
      documents: { id: string; system: { status: string } }[];
      pagination: { currentPage: number; totalPages: number };
    }>(await call(s.mcp, "list", { limit: 1 }));
    expect(first.documents).toHaveLength(1);
    expect(first.documents[0]?.system.status).toBe("done");
    expect(first.pagination).toMatchObject({ currentPage: 1, totalPages: 2 });
    expect(first.documents[0]).not.toHaveProperty("content");
    const second = structured<{ documents: { id: string }[] }>(
      await call(s.mcp, "list", { limit: 1, page: 2 }),
    );
    expect(second.documents[0]?.id).not.toBe(first.documents[0]?.id);
  });

  it("lists chunks and memories", async () => {
    const chunks = structured<{ chunks: { content: string }[] }>(
      await call(s.mcp, "list", { type: "chunks" }),
    );
    expect(chunks.chunks.map((c) => c.content).join(" ")).toContain("Lisbon");
    const res = await call(s.mcp, "list", { type: "memories" });
    expect(res.isError).toBeFalsy();
    expect(text(res)).toMatch(/^memories, page 1 of \d+/);
  });
});

describe("list with a memory id", () => {
  let t: TestEngine;
  let s: Session;
  beforeAll(async () => {
    t = await startEngine();
    s = await connect({ client: t.client, namespace: "moves" });
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  it("reads one memory with its history: the versions before and after it", async () => {
    await call(s.mcp, "add_memory", { content: "Grace works as a nurse.", wait: true });
    await call(s.mcp, "add_memory", { content: "Grace works as a teacher.", wait: true });
    const all = await t.client.ns("moves").memories.list({ limit: 100 }, { include: { forgotten: true } });
    const teacher = all.memories.find((m) => m.memory.includes("teacher"));
    const nurse = all.memories.find((m) => m.memory.includes("nurse"));
    expect(teacher?.parentMemoryId, JSON.stringify(all.memories)).toBe(nurse?.id);

    const res = await call(s.mcp, "list", { id: teacher!.id });
    const out = structured<{
      memories: { id: string; version: number; included: { related: { parents: { id: string }[] } } }[];
    }>(res);
    expect(out.memories).toHaveLength(1);
    expect(out.memories[0]).toMatchObject({ id: teacher!.id, version: 2 });
    expect(out.memories[0]!.included.related.parents.map((p) => p.id)).toEqual([nurse!.id]);
    expect(text(res)).toMatch(new RegExp(`^${teacher!.id} \\(version 2\\): .*teacher`));
    expect(text(res)).toContain(`Earlier versions:\n- ${nurse!.id} (v1): ${JSON.stringify(nurse!.memory)}`);

    const older = await call(s.mcp, "list", { id: nurse!.id });
    expect(text(older)).toMatch(/\(version 1, superseded\)/);
    expect(text(older)).toContain(`Newer versions:\n- ${teacher!.id} (v2)`);

    const unknown = await call(s.mcp, "list", { id: "mem_missing" });
    expect(unknown.isError).toBe(true);
  });
});
