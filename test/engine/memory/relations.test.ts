import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addFacts, openTestEngine, type TestEngine } from "./harness.js";

let t: TestEngine;
beforeEach(async () => {
  t = await openTestEngine();
});
afterEach(async () => {
  await t.close();
});

const home = (city: string) => ({
  memory: `Alice lives in ${city}.`,
  isStatic: true,
  subject: "alice",
  attribute: "home",
});

const listMemories = async (ns: string, include?: { forgotten: boolean }) =>
  (await t.call("POST", `/ns/${ns}/list/memories?limit=100`, include ? { include } : {})).body.memories as {
    id: string;
    memory: string;
    isLatest: boolean;
  }[];

describe("relations between memories", () => {
  it("makes a new fact about the same subject and attribute a new version that supersedes the old one", async () => {
    const [v1] = (await addFacts(t, "alice", [home("Paris")])).memoryIds;
    const [v2] = (await addFacts(t, "alice", [home("Berlin")])).memoryIds;
    const [v3] = (await addFacts(t, "alice", [home("Lisbon")])).memoryIds;

    const latest = await t.call("GET", `/ns/alice/memories/${v3}?include=related`);
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({
      memory: "Alice lives in Lisbon.",
      isLatest: true,
      version: 3,
      parentMemoryId: v2,
      rootMemoryId: v1,
    });
    expect(latest.body.included.related.parents.map((m: { id: string }) => m.id)).toEqual([v2, v1]);
    expect(latest.body.included.related.children).toEqual([]);

    const oldest = await t.call("GET", `/ns/alice/memories/${v1}?include=related`);
    expect(oldest.body).toMatchObject({ isLatest: false, version: 1 });
    expect(oldest.body.included.related.children.map((m: { id: string }) => m.id)).toEqual([v2, v3]);
    expect(oldest.body.included.related.parents).toEqual([]);

    const limited = await t.call("GET", `/ns/alice/memories/${v3}?include=related&relatedLimit=1`);
    expect(limited.body.included.related.parents.map((m: { id: string }) => m.id)).toEqual([v2]);

    // Search answers with the memory's current version alone, also for a question in an older
    // version's words; the older ones are its history (include.related), not hits of their own.
    for (const query of ["Alice lives", "Paris"]) {
      const found = await t.call("POST", "/ns/alice/search", { query, searchMode: "memories", threshold: 0 });
      const hits = found.body.results as { id: string; isLatest: boolean }[];
      expect(hits, query).toEqual([expect.objectContaining({ id: v3, isLatest: true })]);
    }
  });

  it("merges a repeated fact into the existing memory and records the new source", async () => {
    const first = await addFacts(
      t,
      "alice",
      [{ memory: "Alice likes jazz.", subject: "alice", isStatic: true }],
      {
        metadata: { source: "chat-1" },
      },
    );
    const again = await addFacts(
      t,
      "alice",
      [{ memory: "alice LIKES jazz", subject: "alice", isStatic: true }],
      {
        metadata: { source: "chat-2" },
      },
    );
    expect(again.memoryIds).toEqual(first.memoryIds);
    expect((await listMemories("alice")).map((m) => m.memory)).toEqual(["Alice likes jazz."]);

    // The newer document is its latest source, and lists the memory as one of its own.
    const memory = await t.call("GET", `/ns/alice/memories/${first.memoryIds[0]}?include=documents`);
    expect(memory.body.documentId).toBe(again.documentId);
    expect(memory.body.metadata).toEqual({ source: "chat-2" });
    expect(memory.body.included.document.id).toBe(again.documentId);
    const doc = await t.call("GET", `/ns/alice/document/${first.documentId}?include=memories`);
    expect(doc.body.memories.map((m: { id: string }) => m.id)).toEqual(first.memoryIds);
  });

  it("keeps a fact repeated across many documents one memory with every document as a source", async () => {
    const ids = new Set<string>();
    const documents: string[] = [];
    for (let i = 0; i < 30; i++) {
      const added = await addFacts(t, "alice", [
        {
          memory: `Alice read chapter ${i} of the guide on ${i % 2 ? "Monday" : "Friday"}.`,
          subject: "alice",
        },
        { memory: i % 3 ? "Alice likes jazz." : "alice likes JAZZ", subject: "alice", isStatic: true },
      ]);
      ids.add(added.memoryIds[1]!);
      documents.push(added.documentId);
    }
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    const sources = (await t.engine.context.db
      .prepare("SELECT document_id FROM memory_sources WHERE memory_id = $1 ORDER BY rowid")
      .all(id!)) as { document_id: string }[];
    expect(sources.map((s) => s.document_id).sort()).toEqual([...documents].sort());
    expect((await listMemories("alice")).filter((m) => /jazz/i.test(m.memory))).toHaveLength(1);
  });

  it("keeps a forgotten fact forgotten when a later document states it again", async () => {
    const [id] = (await addFacts(t, "alice", [{ memory: "Alice is afraid of spiders.", subject: "alice" }]))
      .memoryIds;
    await t.call("DELETE", "/ns/alice/memories", { ids: [id] });
    const again = await addFacts(t, "alice", [{ memory: "Alice is afraid of spiders.", subject: "alice" }]);
    expect(again.memoryIds).toEqual([id]);
    expect(await listMemories("alice")).toEqual([]);
  });

  it("keeps a fact and its negation apart", async () => {
    await addFacts(t, "alice", [{ memory: "Alice likes olives.", subject: "alice" }]);
    await addFacts(t, "alice", [{ memory: "Alice does not like olives.", subject: "alice" }]);
    expect(await listMemories("alice")).toHaveLength(2);
  });

  it("links added detail about the same subject with extends, both staying valid", async () => {
    const [dog] = (await addFacts(t, "alice", [{ memory: "Alice has a dog.", subject: "alice" }])).memoryIds;
    const [detail] = (
      await addFacts(t, "alice", [
        { memory: "Alice has a dog named Rex who is three years old.", subject: "alice" },
      ])
    ).memoryIds;
    const read = await t.call("GET", `/ns/alice/memories/${detail}?include=related`);
    expect(read.body.isLatest).toBe(true);
    expect(read.body.included.related.siblings.map((m: { id: string }) => m.id)).toEqual([dog]);
    const older = await t.call("GET", `/ns/alice/memories/${dog}?include=related`);
    expect(older.body.isLatest).toBe(true);
    expect(older.body.included.related.siblings.map((m: { id: string }) => m.id)).toEqual([detail]);
  });

  it("stores an inferred fact as an inference derived from the facts it was drawn from", async () => {
    const { memoryIds } = await addFacts(t, "alice", [
      {
        memory: "Alice works as a nurse at Saint Louis hospital.",
        subject: "alice",
        attribute: "work",
        isStatic: true,
      },
      { memory: "Alice works in healthcare.", subject: "alice", isStatic: true, isInference: true },
    ]);
    const [stated, inferred] = memoryIds;
    const read = await t.call("GET", `/ns/alice/memories/${inferred}?include=related`);
    expect(read.body.isInference).toBe(true);
    expect(read.body.included.related.siblings.map((m: { id: string }) => m.id)).toEqual([stated]);
    const statedRead = await t.call("GET", `/ns/alice/memories/${stated}`);
    expect(statedRead.body.isInference).toBe(false);
  });

  it("uses only memories whose source documents match filterByMetadata as context", async () => {
    const [paris] = (await addFacts(t, "alice", [home("Paris")], { metadata: { project: "a" } })).memoryIds;
    // Another project's document cannot see (and so cannot update) project a's memory.
    const [berlin] = (
      await addFacts(t, "alice", [home("Berlin")], {
        metadata: { project: "b" },
        filterByMetadata: { project: "b" },
      })
    ).memoryIds;
    expect((await t.call("GET", `/ns/alice/memories/${paris}`)).body.isLatest).toBe(true);
    expect((await t.call("GET", `/ns/alice/memories/${berlin}`)).body).toMatchObject({
      isLatest: true,
      version: 1,
    });

    // An array value matches any of its items.
    const [lisbon] = (
      await addFacts(t, "alice", [home("Lisbon")], {
        metadata: { project: "a" },
        filterByMetadata: { project: ["a", "c"] },
      })
    ).memoryIds;
    const read = await t.call("GET", `/ns/alice/memories/${lisbon}`);
    expect(read.body).toMatchObject({ parentMemoryId: paris, version: 2, metadata: { project: "a" } });
    expect((await t.call("GET", `/ns/alice/memories/${berlin}`)).body.isLatest).toBe(true);
  });

  it("keeps one namespace's memories out of another's relations", async () => {
    const [paris] = (await addFacts(t, "alice", [home("Paris")])).memoryIds;
    const [berlin] = (await addFacts(t, "bob", [home("Berlin")])).memoryIds;
    expect((await t.call("GET", `/ns/alice/memories/${paris}`)).body.isLatest).toBe(true);
    expect((await t.call("GET", `/ns/bob/memories/${berlin}`)).body.version).toBe(1);
  });
});
