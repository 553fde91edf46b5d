import { afterEach, describe, expect, it } from "vitest";
import { dreamingOptions } from "../../../src/engine/memory/dreamer.js";
import { until } from "../../support/wait.js";
import { openTestEngine, type TestEngine } from "./harness.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  delete process.env.MEMCTX_EXTRACT_MAX_CHARS;
  delete process.env.MEMCTX_DOCUMENT_MAX_MEMORIES;
});

/** `count` sentences, each a fact of its own about a different person. */
const sentences = (count: number) =>
  Array.from({ length: count }, (_, i) => `Person${i} lives in Town${i} and works as a baker.`).join("\n");

const done = (engine: TestEngine, id: string) =>
  until(
    async () => (await engine.call("GET", `/ns/big/document/${id}`)).body,
    (doc) => doc.system.status === "done" && doc.system.dreamingStatus === "done",
    "the document to be processed",
  );

describe("the work one document may cost", () => {
  it("draws memories from the first MEMCTX_EXTRACT_MAX_CHARS characters, says so, and keeps the rest searchable", async () => {
    process.env.MEMCTX_EXTRACT_MAX_CHARS = "2000";
    t = await openTestEngine({ workers: 1 });
    const text = sentences(200);
    const { body } = await t.call("POST", "/ns/big/document", { content: text, dreaming: "instant" });
    const doc = await done(t, body.id);
    expect(doc.error).toMatch(
      /memories were drawn from the first \d+ of \d+ characters \(MEMCTX_EXTRACT_MAX_CHARS\)/,
    );
    const memories = (await t.call("POST", "/ns/big/list/memories?limit=100", {})).body.memories as {
      memory: string;
    }[];
    expect(memories.length).toBeGreaterThan(0);
    // Nothing from past the limit became a memory...
    expect(memories.some((m) => m.memory.includes("Person150"))).toBe(false);
    // ...but the text there is still found.
    const hits = (
      await t.call("POST", "/ns/big/search", { query: "Person150 Town150", searchMode: "chunks" })
    ).body.results as { chunk: string }[];
    expect(hits[0]?.chunk).toContain("Person150");
  });

  it("keeps at most MEMCTX_DOCUMENT_MAX_MEMORIES memories of one document, and says so", async () => {
    process.env.MEMCTX_DOCUMENT_MAX_MEMORIES = "5";
    t = await openTestEngine({ workers: 1 });
    const { body } = await t.call("POST", "/ns/big/document", {
      content: sentences(30),
      dreaming: "instant",
    });
    const doc = await done(t, body.id);
    expect(doc.error).toMatch(/kept the first 5 of \d+ memories \(MEMCTX_DOCUMENT_MAX_MEMORIES\)/);
    const memories = (await t.call("POST", "/ns/big/list/memories?limit=100", {})).body.memories;
    expect(memories.length).toBeLessThanOrEqual(5);
    expect(memories.length).toBeGreaterThan(0);
  });

  it("leaves a document within the limits without a note", async () => {
    t = await openTestEngine({ workers: 1 });
    const { body } = await t.call("POST", "/ns/big/document", { content: sentences(3), dreaming: "instant" });
    expect((await done(t, body.id)).error ?? null).toBeNull();
    expect(dreamingOptions({}, {})).toMatchObject({ maxExtractChars: 200_000, maxMemories: 1_000 });
  });
});
