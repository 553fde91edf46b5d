/**
 * The legacy v3 and v4 routes over a real socket: each answers in its legacy shape, and what it
 * writes is what the v5 API reads (they are translations onto the same services).
 */
import { afterAll, describe, expect, it } from "vitest";
import { MemoryClient as Client, ConflictError } from "../../src/client/index.js";
import { createKey } from "../../src/engine/store/organizations.js";
import {
  type ServeChild,
  serverPerFile,
  spawnServe,
  stopChild,
  TEST_KEY,
  tempDir,
} from "../support/harness.js";

const { server, client } = serverPerFile();

// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field below
type Json = any;
async function call(
  method: string,
  path: string,
  body?: unknown,
  key?: string,
): Promise<{ status: number; json: Json }> {
  const res = await server.call(method, path, { body, ...(key ? { key } : {}) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const namespaceNames = async () =>
  (await client.namespaces.list({ limit: 100 })).namespaces.map((n) => n.namespace);

describe("v3 documents", () => {
  it("adds a document with containerTag and customId, reads it by either id, with its chunks, as v5 does", async () => {
    const added = await call("POST", "/v3/documents", {
      content: "Marta restores old bicycles in her workshop in Porto.",
      containerTag: "v3-docs",
      customId: "bikes",
      metadata: { topic: "hobby", year: 2021 },
      dreaming: "instant",
    });
    expect(added.status).toBe(200);
    expect(added.json).toEqual({ id: expect.stringMatching(/^doc_/), status: "queued" });
    await client.ns("v3-docs").documents.waitFor(added.json.id, { until: "memories" });

    const byCustom = await call("GET", "/v3/documents/bikes");
    expect(byCustom.status).toBe(200);
    expect(byCustom.json).toMatchObject({
      id: added.json.id,
      customId: "bikes",
      status: "done",
      dreamingStatus: "done",
      containerTags: ["v3-docs"],
      metadata: { topic: "hobby", year: 2021 },
      system: { status: "done", dreamingStatus: "done" },
    });
    expect(byCustom.json.createdAt).toBe(byCustom.json.system.createdAt);
    const v5 = await client.ns("v3-docs").documents.get(added.json.id, { include: ["chunks"] });
    expect((await call("GET", `/v3/documents/${added.json.id}`)).json.content).toBe(v5.content);

    const chunks = await call("GET", "/v3/documents/bikes/chunks");
    expect(chunks.status).toBe(200);
    expect(chunks.json.documentId).toBe(added.json.id);
    expect(chunks.json.total).toBe(v5.chunks?.length);
    expect(chunks.json.chunks.map((c: Json) => c.id)).toEqual(v5.chunks?.map((c) => c.id));
    expect(chunks.json.chunks[0]).toMatchObject({
      position: 0,
      type: expect.any(String),
      createdAt: expect.any(String),
    });
    expect(chunks.json.chunks.map((c: Json) => c.content).join(" ")).toContain("bicycles");
  });

  it("upserts by customId: re-sending keeps one document", async () => {
    const a = await call("POST", "/v3/documents", {
      content: "Draft one.",
      containerTag: "v3-upsert",
      customId: "d",
    });
    const b = await call("POST", "/v3/documents", {
      content: "Draft two.",
      containerTag: "v3-upsert",
      customId: "d",
    });
    expect(b.json.id).toBe(a.json.id);
    const list = await client.ns("v3-upsert").documents.list();
    expect(list.documents.map((d) => d.content)).toEqual(["Draft two."]);
  });

  it("lists documents with v3 filters, body pagination, and content only when asked", async () => {
    for (const [id, year, tags] of [
      ["l1", 2019, ["red"]],
      ["l2", 2021, ["blue"]],
      ["l3", 2023, ["red", "blue"]],
    ] as const) {
      await call("POST", "/v3/documents", {
        content: `List document ${id}.`,
        containerTag: "v3-list",
        customId: id,
        metadata: { year, tags: [...tags], kind: "Note" },
      });
    }
    const all = await call("POST", "/v3/documents/list", { containerTags: ["v3-list"], limit: 2, page: 1 });
    expect(all.status).toBe(200);
    expect(all.json.pagination).toEqual({ currentPage: 1, limit: 2, totalItems: 3, totalPages: 2 });
    expect(all.json.memories).toHaveLength(2);
    expect(all.json.memories[0].content).toBeUndefined();
    expect(all.json.memories[0].containerTags).toEqual(["v3-list"]);

    const filtered = await call("POST", "/v3/documents/list", {
      containerTags: ["v3-list"],
      includeContent: true,
      order: "asc",
      filters: {
        AND: [
          { key: "year", value: "2020", filterType: "numeric", numericOperator: ">" },
          { key: "tags", value: "red", filterType: "array_contains" },
          { key: "kind", value: "note", ignoreCase: true },
        ],
      },
    });
    expect(filtered.status).toBe(200);
    expect(filtered.json.memories.map((d: Json) => d.customId)).toEqual(["l3"]);
    expect(filtered.json.memories[0].content).toBe("List document l3.");

    const negated = await call("POST", "/v3/documents/list", {
      containerTags: ["v3-list"],
      order: "asc",
      filters: {
        OR: [
          { key: "year", value: 2021, filterType: "numeric", numericOperator: ">=", negate: true },
          { key: "tags", value: "red", filterType: "array_contains", negate: true },
        ],
      },
    });
    expect(negated.json.memories.map((d: Json) => d.customId)).toEqual(["l1", "l2"]);
  });

  it("lists across every namespace the key may use when containerTags is absent", async () => {
    const key = await createKey(server.engine.context.db, "local", ["v3-list", "v3-upsert"]);
    const listed = await call("POST", "/v3/documents/list", { limit: 100 }, key);
    expect(listed.status).toBe(200);
    expect(new Set(listed.json.memories.flatMap((d: Json) => d.containerTags))).toEqual(
      new Set(["v3-list", "v3-upsert"]),
    );
    // A document of a namespace the key may not use is not found by id either.
    expect((await call("GET", "/v3/documents/bikes", undefined, key)).status).toBe(404);
    const refused = await call("POST", "/v3/documents/list", { containerTags: ["v3-docs"] }, key);
    expect(refused.status).toBe(403);
    expect(refused.json.details).toContain("v3-docs");
  });

  it("deletes one document, then answers 404; bulk deletes report unknown ids one by one", async () => {
    const a = await call("POST", "/v3/documents", {
      content: "Delete me.",
      containerTag: "v3-del",
      customId: "x",
    });
    await call("POST", "/v3/documents", { content: "Delete me too.", containerTag: "v3-del", customId: "y" });
    await call("POST", "/v3/documents", { content: "Keep me.", containerTag: "v3-del", customId: "z" });
    const del = await call("DELETE", "/v3/documents/x");
    expect(del).toEqual({ status: 200, json: { id: a.json.id, deleted: true } });
    expect((await call("DELETE", "/v3/documents/x")).status).toBe(404);
    expect((await call("GET", `/v3/documents/${a.json.id}`)).status).toBe(404);

    const bulk = await call("DELETE", "/v3/documents/bulk", { ids: ["y", "nope"] });
    expect(bulk.status).toBe(200);
    expect(bulk.json).toEqual({
      success: false,
      deletedCount: 1,
      errors: [{ id: "nope", error: "document not found" }],
    });
    const left = await client.ns("v3-del").documents.list();
    expect(left.documents.map((d) => d.customId)).toEqual(["z"]);
  });

  it("answers 409 for a customId used in two namespaces, and the service id still works", async () => {
    const a = await call("POST", "/v3/documents", {
      content: "In A.",
      containerTag: "dup-a",
      customId: "same",
    });
    await call("POST", "/v3/documents", { content: "In B.", containerTag: "dup-b", customId: "same" });
    const res = await call("GET", "/v3/documents/same");
    expect(res.status).toBe(409);
    expect(res.json.details).toContain("service id");
    expect((await call("GET", `/v3/documents/${a.json.id}`)).json.content).toBe("In A.");
  });

  it("refuses bad input with the v5 400s and writes nothing", async () => {
    const bad = await call("POST", "/v3/documents", { content: "", containerTag: "v3-bad" });
    expect(bad.status).toBe(400);
    expect(bad.json.details).toBe("content: must not be empty");
    const blank = await call("POST", "/v3/documents", { content: "  \n ", containerTag: "v3-bad" });
    expect(blank.status).toBe(400);
    expect(blank.json.details).toBe("content: must not be empty");
    const badTag = await call("POST", "/v3/documents", { content: "x", containerTag: "no spaces" });
    expect(badTag.status).toBe(400);
    expect(badTag.json.details).toContain("containerTag: must match ^[a-zA-Z0-9_:-]+$");
    const badFilter = await call("POST", "/v3/documents/list", {
      filters: { AND: [{ key: "year", value: "soon", filterType: "numeric", numericOperator: ">" }] },
    });
    expect(badFilter.status).toBe(400);
    expect(badFilter.json.details).toBe("filters.AND.0.value: value must be a number for filterType numeric");
    const badBulk = await call("DELETE", "/v3/documents/bulk", { ids: [] });
    expect(badBulk.status).toBe(400);
    expect(badBulk.json.details).toBe("ids: ids needs at least 1 id");
    expect(await namespaceNames()).not.toContain("v3-bad");
  });
});

describe("v4 conversations", () => {
  it("keeps one document per conversationId, its transcript one turn per line", async () => {
    const first = await call("POST", "/v4/conversations", {
      conversationId: "chat-1",
      containerTags: ["v4-conv"],
      messages: [
        { role: "user", content: "I just adopted a cat named Miso." },
        { role: "assistant", content: [{ type: "text", text: "Congratulations on Miso!" }] },
      ],
    });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      id: expect.stringMatching(/^doc_/),
      conversationId: "chat-1",
      status: "queued",
    });
    const second = await call("POST", "/v4/conversations", {
      conversationId: "chat-1",
      containerTags: ["v4-conv"],
      metadata: { channel: "web" },
      messages: [
        { role: "user", content: "I just adopted a cat named Miso." },
        { role: "assistant", content: [{ type: "text", text: "Congratulations on Miso!" }] },
        { role: "user", content: "She is three months old.\nAnd very loud." },
      ],
    });
    expect(second.json.id).toBe(first.json.id);
    const docs = await client.ns("v4-conv").documents.list();
    expect(docs.documents).toHaveLength(1);
    expect(docs.documents[0]?.customId).toBe("chat-1");
    expect(docs.documents[0]?.metadata).toEqual({ channel: "web" });
    expect(docs.documents[0]?.content).toBe(
      [
        "user: I just adopted a cat named Miso.",
        "assistant: Congratulations on Miso!",
        "user: She is three months old. And very loud.",
      ].join("\n"),
    );
  });

  it("refuses a message with a role v4 does not know, naming it", async () => {
    const res = await call("POST", "/v4/conversations", {
      conversationId: "chat-2",
      containerTags: ["v4-conv-bad"],
      messages: [{ role: "narrator", content: "Once upon a time" }],
    });
    expect(res.status).toBe(400);
    expect(res.json.details).toBe("messages.0.role: role must be user, assistant, system or tool");
    expect(await namespaceNames()).not.toContain("v4-conv-bad");
  });
});

describe("v4 memories, read back through v5", () => {
  it("writes memories that v5 search and v5 reads find", async () => {
    const res = await call("POST", "/v4/memories", {
      containerTag: "v4-mem",
      memories: [
        { content: "Jonas is allergic to hazelnuts.", isStatic: true, metadata: { source: "intake" } },
        {
          content: "Jonas is flying to Oslo next Tuesday.",
          forgetAfter: "2099-01-01",
          forgetReason: "trip over",
        },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.json.documentId).toBeNull();
    expect(res.json.memories).toEqual([
      {
        id: expect.stringMatching(/^mem_/),
        memory: "Jonas is allergic to hazelnuts.",
        isStatic: true,
        createdAt: expect.any(String),
        forgetAfter: null,
        forgetReason: null,
        metadata: { source: "intake" },
      },
      {
        id: expect.stringMatching(/^mem_/),
        memory: "Jonas is flying to Oslo next Tuesday.",
        isStatic: false,
        createdAt: expect.any(String),
        forgetAfter: "2099-01-01T00:00:00.000Z",
        forgetReason: "trip over",
        metadata: {},
      },
    ]);
    const found = await client.ns("v4-mem").search({ query: "hazelnut allergy" });
    expect(found.results[0]?.id).toBe(res.json.memories[0].id);
    expect(found.results[0]?.memory).toBe("Jonas is allergic to hazelnuts.");
    const read = await client.ns("v4-mem").memories.get(res.json.memories[1].id);
    expect(read).toMatchObject({ version: 1, isLatest: true, isForgotten: false, isStatic: false });
    const profile = await client.ns("v4-mem").profile.get();
    expect(profile.profile.static.map((m) => m.memory)).toContain("Jonas is allergic to hazelnuts.");
  });

  it("PATCH makes a new version whose parent is the old memory", async () => {
    const [old] = (
      await call("POST", "/v4/memories", {
        containerTag: "v4-ver",
        memories: [{ content: "Ada works at Initech." }],
      })
    ).json.memories;
    const patched = await call("PATCH", "/v4/memories", {
      id: old.id,
      containerTag: "v4-ver",
      newContent: "Ada works at Globex.",
      metadata: { changed: true },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({
      memory: "Ada works at Globex.",
      version: 2,
      parentMemoryId: old.id,
      rootMemoryId: old.id,
      isLatest: true,
      metadata: { changed: true },
    });
    const v5Old = await client.ns("v4-ver").memories.get(old.id, { include: ["related"] });
    expect(v5Old.isLatest).toBe(false);
    expect(v5Old.included?.related?.children.map((m) => m.id)).toEqual([patched.json.id]);
    const v5New = await client.ns("v4-ver").memories.get(patched.json.id, { include: ["related"] });
    expect(v5New.included?.related?.parents.map((m) => m.id)).toEqual([old.id]);
    // Selected by its text: the latest version holding it.
    const third = await call("PATCH", "/v4/memories", {
      content: "ada works at globex",
      containerTag: "v4-ver",
      newContent: "Ada works at Hooli.",
    });
    expect(third.json).toMatchObject({ version: 3, parentMemoryId: patched.json.id, rootMemoryId: old.id });
    // The superseded version is not updated again: that would fork the history.
    const stale = await call("PATCH", "/v4/memories", {
      id: old.id,
      containerTag: "v4-ver",
      newContent: "Ada works at Acme.",
    });
    expect(stale.status).toBe(409);
    const list = await call("POST", "/v4/memories/list", { containerTags: ["v4-ver"] });
    expect(list.status).toBe(200);
    expect(list.json.memoryEntries).toHaveLength(1);
    expect(list.json.memoryEntries[0]).toMatchObject({
      id: third.json.id,
      memory: "Ada works at Hooli.",
      documentIds: [],
    });
    expect(list.json.memoryEntries[0].history.map((m: Json) => m.id)).toEqual([patched.json.id, old.id]);
  });

  it("DELETE forgets one memory; a second DELETE is a 409; v5 search no longer finds it", async () => {
    const [m] = (
      await call("POST", "/v4/memories", {
        containerTag: "v4-del",
        memories: [{ content: "Priya collects vinyl records." }],
      })
    ).json.memories;
    expect((await client.ns("v4-del").search({ query: "vinyl records" })).results).toHaveLength(1);
    const first = await call("DELETE", "/v4/memories", {
      id: m.id,
      containerTag: "v4-del",
      reason: "asked to",
    });
    expect(first).toEqual({ status: 200, json: { id: m.id, forgotten: true } });
    const again = await call("DELETE", "/v4/memories", { id: m.id, containerTag: "v4-del" });
    expect(again.status).toBe(409);
    expect(again.json.error).toBe("Memory already forgotten");
    expect((await client.ns("v4-del").search({ query: "vinyl records" })).results).toHaveLength(0);
    const read = await client.ns("v4-del").memories.get(m.id);
    expect(read).toMatchObject({ isForgotten: true, forgetReason: "asked to" });
    // The typed client maps the 409 too.
    await expect(client.legacy.memories.forget({ id: m.id, containerTag: "v4-del" })).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect((await call("DELETE", "/v4/memories", { id: "mem_unknown", containerTag: "v4-del" })).status).toBe(
      404,
    );
  });

  it("forget-matching: a dry run lists candidates and changes nothing, then the real run forgets them", async () => {
    await call("POST", "/v4/memories", {
      containerTag: "v4-fm",
      memories: [
        { content: "Leo drinks dark roast coffee every morning." },
        { content: "Leo prefers dark roast coffee beans from Ethiopia." },
        { content: "Leo lives in Lisbon." },
      ],
    });
    const dry = await call("POST", "/v4/memories/forget-matching", {
      containerTag: "v4-fm",
      query: "dark roast coffee",
      dryRun: true,
    });
    expect(dry.status).toBe(200);
    expect(dry.json).toMatchObject({ dryRun: true, count: 2, forgetBatchId: null });
    expect(dry.json.candidates.map((c: Json) => c.memory).sort()).toEqual([
      "Leo drinks dark roast coffee every morning.",
      "Leo prefers dark roast coffee beans from Ethiopia.",
    ]);
    expect(dry.json.summary).toContain("2 memories");
    expect((await client.ns("v4-fm").memories.list()).memories).toHaveLength(3);

    const real = await call("POST", "/v4/memories/forget-matching", {
      containerTag: "v4-fm",
      query: "dark roast coffee",
    });
    expect(real.json).toMatchObject({
      dryRun: false,
      count: 2,
      forgetBatchId: expect.stringMatching(/^fgb_/),
    });
    expect(real.json.forgotten.map((c: Json) => c.id).sort()).toEqual(
      dry.json.candidates.map((c: Json) => c.id).sort(),
    );
    const left = await client.ns("v4-fm").memories.list();
    expect(left.memories.map((m) => m.memory)).toEqual(["Leo lives in Lisbon."]);
    const forgotten = await client.ns("v4-fm").memories.get(real.json.forgotten[0].id);
    expect(forgotten.forgetReason).toBe(`forget-matching ${real.json.forgetBatchId}`);

    // By ids, capped by maxForget.
    const lisbon = left.memories[0]!.id;
    const byIds = await call("POST", "/v4/memories/forget-matching", {
      containerTag: "v4-fm",
      ids: [lisbon, "mem_unknown"],
      maxForget: 1,
    });
    expect(byIds.json).toMatchObject({ count: 1, forgotten: [{ id: lisbon }] });
  });

  it("lists memories with v4 filters, their source documents and relations", async () => {
    await call("POST", "/v4/memories", {
      containerTag: "v4-list",
      memories: [
        { content: "Kim plays the cello.", metadata: { kind: "hobby", level: 3 } },
        { content: "Kim works as a nurse.", metadata: { kind: "work", level: 5 } },
      ],
    });
    const res = await call("POST", "/v4/memories/list", {
      containerTags: ["v4-list"],
      filters: { AND: [{ key: "level", value: "4", filterType: "numeric", numericOperator: "<" }] },
    });
    expect(res.status).toBe(200);
    expect(res.json.memoryEntries.map((m: Json) => m.memory)).toEqual(["Kim plays the cello."]);
    expect(res.json.memoryEntries[0]).toMatchObject({ history: [], memoryRelations: [], documentIds: [] });
    expect(res.json.pagination).toMatchObject({ currentPage: 1, totalItems: 1 });

    // A memory drawn from a document names it.
    const doc = await call("POST", "/v3/documents", {
      content: "Kim has a dog called Pepper.",
      containerTag: "v4-list",
      dreaming: "instant",
    });
    await client.ns("v4-list").documents.waitFor(doc.json.id, { until: "memories" });
    const withDoc = await call("POST", "/v4/memories/list", { containerTags: ["v4-list"], limit: 100 });
    const pepper = withDoc.json.memoryEntries.find((m: Json) => m.memory.includes("Pepper"));
    expect(pepper?.documentIds).toEqual([doc.json.id]);
  });

  it("refuses bad memory writes with the v5 400s and writes nothing", async () => {
    const tooMany = await call("POST", "/v4/memories", {
      containerTag: "v4-bad",
      memories: Array.from({ length: 101 }, (_, i) => ({ content: `fact ${i}` })),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.details).toBe("memories: memories takes at most 100 memories");
    const oneBad = await call("POST", "/v4/memories", {
      containerTag: "v4-bad",
      memories: [{ content: "fine" }, { content: "" }],
    });
    expect(oneBad.status).toBe(400);
    expect(oneBad.json.details).toBe("memories.1.content: content must not be empty");
    const both = await call("PATCH", "/v4/memories", {
      id: "a",
      content: "b",
      containerTag: "v4-bad",
      newContent: "c",
    });
    expect(both.status).toBe(400);
    expect(both.json.details).toBe("id: send id or content (exactly one)");
    const cap = await call("POST", "/v4/memories/forget-matching", {
      containerTag: "v4-bad",
      query: "x",
      maxForget: 501,
    });
    expect(cap.status).toBe(400);
    expect(cap.json.details).toBe("maxForget: maxForget must be at most 500");
    expect(await namespaceNames()).not.toContain("v4-bad");
    // A key limited to other namespaces writes nothing either.
    const key = await createKey(server.engine.context.db, "local", ["elsewhere"]);
    const refused = await call(
      "POST",
      "/v4/memories",
      { containerTag: "v4-bad", memories: [{ content: "x" }] },
      key,
    );
    expect(refused.status).toBe(403);
    expect(await namespaceNames()).not.toContain("v4-bad");
  });
});

describe("legacy search and profile", () => {
  it("searches memories only, at threshold 0.6, unless told otherwise", async () => {
    await call("POST", "/v4/memories", {
      containerTag: "v4-search",
      memories: [
        { content: "Noor swims in the lake every summer morning." },
        { content: "Noor bought a red bicycle helmet." },
      ],
    });
    const doc = await call("POST", "/v3/documents", {
      content: "Club notes. The lake water was cold in June. The swim club meets on Sundays at the pier.",
      containerTag: "v4-search",
    });
    await client.ns("v4-search").documents.waitFor(doc.json.id);
    const q = "summer lake swim morning bicycle";

    const legacy = await call("POST", "/v4/search", { q, containerTag: "v4-search" });
    expect(legacy.status).toBe(200);
    expect(legacy.json.results.length).toBeGreaterThan(0);
    expect(legacy.json.total).toBe(legacy.json.results.length);
    expect(typeof legacy.json.timing).toBe("number");
    for (const r of legacy.json.results) {
      expect(r.chunk).toBeUndefined();
      expect(r.similarity).toBeGreaterThanOrEqual(0.6);
      expect(r.updatedAt).toEqual(expect.any(String));
    }
    // What the defaults leave out: chunks match too, and memories under 0.6.
    const chunks = await client.ns("v4-search").search({ query: q, searchMode: "chunks" });
    expect(chunks.results.length).toBeGreaterThan(0);
    const all = await client.ns("v4-search").search({ query: q, searchMode: "memories", threshold: 0 });
    const strong = all.results.filter((r) => r.similarity >= 0.6);
    expect(strong.length).toBeLessThan(all.results.length);
    expect(legacy.json.results.map((r: Json) => r.id)).toEqual(strong.map((r) => r.id));
    // The legacy defaults are defaults: explicit values win.
    const hybrid = await call("POST", "/v4/search", {
      q,
      containerTag: "v4-search",
      searchMode: "hybrid",
      threshold: 0,
    });
    expect(hybrid.json.results.some((r: Json) => r.chunk !== undefined)).toBe(true);
    expect(hybrid.json.results.length).toBeGreaterThan(legacy.json.results.length);
    const badFilter = await call("POST", "/v4/search", {
      q: "lake",
      containerTag: "v4-search",
      filters: { OR: [{ key: "tags", value: "x", filterType: "array_contains", ignoreCase: true }] },
    });
    expect(badFilter.status).toBe(400);
    expect(badFilter.json.details).toBe(
      "filters.OR.0.ignoreCase: ignoreCase is not supported with filterType array_contains",
    );
  });

  it("answers the profile as texts, with search results for q and buckets when asked", async () => {
    await call("POST", "/v4/memories", {
      containerTag: "v4-profile",
      memories: [
        { content: "Sam is a vegetarian.", isStatic: true },
        { content: "Sam is preparing for a marathon in April." },
      ],
    });
    const plain = await call("POST", "/v4/profile", { containerTag: "v4-profile" });
    expect(plain.status).toBe(200);
    expect(plain.json.profile.static).toEqual(["Sam is a vegetarian."]);
    expect(plain.json.profile.dynamic).toEqual(["Sam is preparing for a marathon in April."]);
    expect(plain.json.profile.buckets).toBeUndefined();
    expect(plain.json.searchResults).toBeUndefined();

    const withQ = await call("POST", "/v4/profile", {
      containerTag: "v4-profile",
      q: "marathon",
      include: { buckets: true },
    });
    expect(withQ.json.searchResults.results.map((r: Json) => r.memory)).toEqual([
      "Sam is preparing for a marathon in April.",
    ]);
    expect(Object.keys(withQ.json.profile.buckets)).toContain("preferences");

    const buckets = await call("POST", "/v4/profile/buckets", { containerTag: "v4-profile" });
    expect(buckets.status).toBe(200);
    expect(buckets.json.buckets).toContainEqual({
      key: "preferences",
      description: expect.any(String),
      owner: "organization",
    });
    const unknown = await call("POST", "/v4/profile", { containerTag: "v4-profile", buckets: ["nope"] });
    expect(unknown.status).toBe(400);
    expect(unknown.json.details).toContain("unknown bucket 'nope'");
  });
});

describe("the legacy routes in a real memctx serve", () => {
  let serve: ServeChild | undefined;
  const serveDir = tempDir();
  afterAll(async () => {
    if (serve) await stopChild(serve);
    serveDir.remove();
  });

  it("round-trips a v4 write to a v5 search and a v4 update to a v5 version", async () => {
    serve = await spawnServe(serveDir.path);
    const c = new Client({ baseUrl: serve.url, apiKey: TEST_KEY, maxRetries: 0 });
    try {
      const written = await c.legacy.memories.add({
        containerTag: "served",
        memories: [{ content: "Elif keeps a beehive on her balcony." }],
      });
      const id = written.memories[0]!.id;
      const found = await c.ns("served").search({ query: "beehive balcony" });
      expect(found.results.map((r) => r.id)).toEqual([id]);
      const next = await c.legacy.memories.update({
        id,
        containerTag: "served",
        newContent: "Elif keeps two beehives.",
      });
      expect(next).toMatchObject({ version: 2, parentMemoryId: id });
      const afterUpdate = await c.ns("served").search({ query: "beehives" });
      expect(afterUpdate.results[0]?.id).toBe(next.id);
      const legacy = await c.legacy.search({ q: "beehives", containerTag: "served" });
      expect(legacy.results[0]?.id).toBe(next.id);
    } finally {
      await c.close();
    }
  });
});
