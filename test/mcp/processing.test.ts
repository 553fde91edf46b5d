import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import {
  API_KEY,
  call,
  connect,
  type Session,
  startEngine,
  structured,
  type TestEngine,
  text,
} from "./helpers.js";

const NOTE = "My gym locker is number 42, next to the sauna.";
const PROCESSING = /1 document is still being processed: .+ Ask again in a moment, or add with wait: true/;

interface SearchOut {
  results: { kind: string; text: string; source: { documentId: string | null } }[];
  processing?: number;
}

describe("right after add_memory, before anything is processed", () => {
  // No processing at all: what is added stays queued, as it is for a moment after every add.
  let t: TestEngine;
  let s: Session;
  let noteId: string;
  beforeAll(async () => {
    t = await startEngine({ workers: 0 });
    s = await connect({ client: t.client, namespace: "fresh" });
    await call(s.mcp, "add_memory", { content: NOTE });
    noteId = (await t.client.ns("fresh").documents.list()).documents[0]!.customId!;
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  it("search finds the new fact in its text, marked as not processed yet, and says what is still processing", async () => {
    const res = await call(s.mcp, "search", { query: "Which gym locker is mine?" });
    const out = structured<SearchOut>(res);
    // The id add_memory chose for the note, as search shows a source.
    expect(out.results[0]).toMatchObject({ kind: "pending", text: NOTE, source: { documentId: noteId } });
    expect(out.processing).toBe(1);
    expect(text(res)).toMatch(
      /^1 result:\n1\. \[not processed yet 0\.\d\d, just now\] "My gym locker is number 42/,
    );
    expect(text(res)).toMatch(PROCESSING);
  });

  it("search that finds nothing says that documents are still being processed", async () => {
    const res = await call(s.mcp, "search", { query: "dentist appointment" });
    expect(structured<SearchOut>(res)).toMatchObject({ results: [], processing: 1 });
    expect(text(res)).toMatch(/^Nothing found for "dentist appointment"/);
    expect(text(res)).toMatch(PROCESSING);
  });

  it("list, forget by meaning and the profile say so too", async () => {
    const memories = await call(s.mcp, "list", { type: "memories" });
    expect(structured(memories)).toMatchObject({ memories: [], processing: 1 });
    expect(text(memories)).toMatch(
      /^memories, page 1 of 0: none\n1 document is still being processed: their memories are not all listed yet\./,
    );

    const documents = await call(s.mcp, "list");
    expect(text(documents)).toMatch(/\[queued, memories dreaming\]/);
    expect(text(documents)).toMatch(PROCESSING);

    const forget = await call(s.mcp, "forget", { query: "gym locker" });
    expect(structured(forget)).toMatchObject({ forgotten: 0, processing: 1 });
    expect(text(forget)).toMatch(/^No memory matches "gym locker"/);
    expect(text(forget)).toMatch(/memories not made yet from them cannot be forgotten until they are/);

    const profile = await call(s.mcp, "get_profile");
    expect(structured(profile)).toMatchObject({ processing: 1 });
    expect(text(profile)).toMatch(/the profile does not show what they say yet/);
  });

  it("a namespace never written says nothing is processing", async () => {
    const empty = await connect({ client: t.client, namespace: "untouched" });
    try {
      const res = await call(empty.mcp, "search", { query: "gym locker" });
      expect(structured<SearchOut>(res)).toMatchObject({ results: [], processing: 0 });
      expect(text(res)).not.toMatch(/still being processed/);
    } finally {
      await empty.close();
    }
  });

  it("against a service that does not count them (the hosted one), reads the newest documents' states", async () => {
    // The engine's own answers, less memctx's `processing` count: what the hosted service sends.
    const hosted = new MemoryClient({
      apiKey: API_KEY,
      retryBaseMs: 10,
      fetch: async (req) => {
        const res = await t.engine.fetch(req);
        if (req.method !== "GET" || !/\/ns\/[^/]+$/.test(new URL(req.url).pathname)) return res;
        const { processing: _, ...record } = (await res.json()) as Record<string, unknown>;
        return Response.json(record, { status: res.status });
      },
    });
    const session = await connect({ client: hosted, namespace: "fresh" });
    try {
      const res = await call(session.mcp, "list", { type: "memories" });
      expect(structured(res)).toMatchObject({ processing: 1 });
      expect(text(res)).toMatch(PROCESSING);
    } finally {
      await session.close();
      await hosted.close();
    }
  });
});

describe("once processed", () => {
  let t: TestEngine;
  let s: Session;
  beforeAll(async () => {
    t = await startEngine();
    s = await connect({ client: t.client, namespace: "done" });
    await call(s.mcp, "add_memory", { content: NOTE, wait: true });
  });
  afterAll(async () => {
    await s.close();
    await t.close();
  });

  it("search finds the fact and says nothing about processing", async () => {
    const res = await call(s.mcp, "search", { query: "Which gym locker is mine?" });
    const out = structured<SearchOut>(res);
    expect(out.processing).toBe(0);
    expect(out.results.some((r) => r.kind === "memory" && r.text.includes("locker"))).toBe(true);
    expect(out.results.every((r) => r.kind !== "pending")).toBe(true);
    expect(text(res)).not.toMatch(/still being processed/);
    expect(text(await call(s.mcp, "list", { type: "memories" }))).not.toMatch(/still being processed/);
  });
});
