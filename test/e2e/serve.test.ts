import { describe, expect, it } from "vitest";
import type { BatchAddResponse } from "../../src/api/documents.js";
import { endpoints, fillPath } from "../../src/api/endpoints.js";
import { REQUEST_BODY_MAX_BYTES } from "../../src/api/limits.js";
import { AuthenticationError, NotFoundError, PayloadTooLargeError } from "../../src/client/index.js";
import { createKey } from "../../src/engine/store/organizations.js";
import { SCHEMA_VERSION } from "../../src/engine/store/schema.js";
import { serverPerFile } from "../support/harness.js";
import { until } from "../support/wait.js";

const { server, client } = serverPerFile();

const chunkTexts = async (ns: string) =>
  (await client.ns(ns).chunks.list({ limit: 100 })).chunks.map((c) => c.content).sort();

describe("documents over a real socket", () => {
  it("adds a document, processes it to done, and reads it back with its chunks", async () => {
    const ns = client.ns("alice");
    const added = await ns.documents.add({
      content: "Alice keeps bees in her garden in Lyon.",
      id: "bees",
      metadata: { topic: "hobby", n: 3, ok: true, tags: ["a", "b"] },
    });
    expect(added.status).toBe("queued");
    await ns.documents.waitFor(added.id, { until: "memories" });
    const doc = await ns.documents.get("bees", { include: ["chunks"] });
    expect(doc.id).toBe(added.id);
    expect(doc.customId).toBe("bees");
    expect(doc.system.status).toBe("done");
    expect(doc.system.dreamingStatus).toBe("done");
    expect(doc.metadata).toEqual({ topic: "hobby", n: 3, ok: true, tags: ["a", "b"] });
    expect(doc.chunks?.map((c) => c.content).join(" ")).toContain("bees");
    expect(doc.chunks?.every((c) => c.documentId === added.id)).toBe(true);
    expect(doc.memories).toBeUndefined();
    // read by service id as well, with the memories dreamed from it when asked
    const byServiceId = await ns.documents.get(added.id, { include: ["memories"] });
    expect(byServiceId.memories?.map((m) => m.memory).join(" ")).toContain("bees");
    expect(byServiceId.chunks).toBeUndefined();
  });

  it("upserts by caller id: new content replaces the old chunks", async () => {
    const ns = client.ns("upsert");
    const first = await ns.documents.add({ content: "The meeting is on Monday.", id: "m1" });
    await ns.documents.waitFor(first.id);
    const second = await ns.documents.add({ content: "The meeting moved to Thursday.", id: "m1" });
    expect(second).toEqual({ id: first.id, status: "queued" });
    await ns.documents.waitFor(first.id);
    expect(await chunkTexts("upsert")).toEqual(["The meeting moved to Thursday."]);
    const list = await ns.documents.list();
    expect(list.documents).toHaveLength(1);
  });

  it("does not reprocess identical content: it answers the current status", async () => {
    const ns = client.ns("same");
    const a = await ns.documents.add({ content: "Unchanged text.", id: "s1" });
    await ns.documents.waitFor(a.id);
    const before = await ns.documents.get("s1", { include: ["chunks"] });
    // Text sent as is is titled by its first line.
    expect(before.title).toBe("Unchanged text.");
    const b = await ns.documents.add({ content: "Unchanged text.", id: "s1" });
    expect(b).toEqual({ id: a.id, status: "done" });
    const after = await ns.documents.get("s1", { include: ["chunks"] });
    expect(after.chunks?.map((c) => c.id)).toEqual(before.chunks?.map((c) => c.id));
  });

  it("deletes documents with their chunks and reports unknown ids one by one", async () => {
    const ns = client.ns("del");
    const a = await ns.documents.add({ content: "First document to delete.", id: "d1" });
    const b = await ns.documents.add({ content: "Second document that stays." });
    await ns.documents.waitFor(a.id);
    await ns.documents.waitFor(b.id);
    const res = await ns.documents.delete(["d1", "missing"]);
    expect(res.count).toBe(1);
    expect(res.errors).toEqual([{ id: "missing", error: "document not found" }]);
    await expect(ns.documents.get("d1")).rejects.toBeInstanceOf(NotFoundError);
    expect(await chunkTexts("del")).toEqual(["Second document that stays."]);
  });

  it("lists with pagination, sort and a typed filter", async () => {
    const ns = client.ns("lists");
    for (let i = 0; i < 5; i++) {
      await ns.documents.add({ content: `List item ${i}`, id: `l${i}`, metadata: { i, even: i % 2 === 0 } });
    }
    const page1 = await ns.documents.list({ limit: 2, page: 1, sort: "createdAt", order: "asc" });
    expect(page1.documents.map((d) => d.customId)).toEqual(["l0", "l1"]);
    expect(page1.pagination).toMatchObject({ currentPage: 1, totalPages: 3 });
    const page3 = await ns.documents.list({ limit: 2, page: 3, order: "asc" });
    expect(page3.documents.map((d) => d.customId)).toEqual(["l4"]);
    const even = await ns.documents.list(
      { limit: 10, order: "asc" },
      { filter: { field: "even", operator: "eq", value: true } },
    );
    expect(even.documents.map((d) => d.customId)).toEqual(["l0", "l2", "l4"]);
    expect(even.chunks).toEqual([]);
    expect(even.memories).toEqual([]);
    // Only the selected type's array is populated.
    const memories = await ns.memories.list();
    expect(memories.documents).toEqual([]);
    expect(memories.chunks).toEqual([]);
  });

  it("answers empty lists, not errors, for a namespace that does not exist", async () => {
    const list = await client.ns("never-written").documents.list();
    expect(list.documents).toEqual([]);
    expect(list.pagination.totalPages).toBe(0);
    await expect(client.ns("never-written").get()).rejects.toBeInstanceOf(NotFoundError);
  });

  it("marks a document whose URL points at a private address as failed, with the reason", async () => {
    const ns = client.ns("urls");
    const added = await ns.documents.add({ content: "http://127.0.0.1:9/secret" });
    const doc = await until(
      () => ns.documents.get(added.id),
      (d) => d.system.status === "failed",
      "the document to fail",
    );
    expect(doc.error).toMatch(/private|loopback/i);
  });
});

describe("batch add", () => {
  it("adds strings and objects, and fails bad items alone, each with its own result", async () => {
    // Raw: the client refuses a batch with a bad item before sending it.
    const raw = await server.call("POST", "/v3/documents/batch", {
      body: {
        containerTag: "batch",
        documents: [
          { content: "A good item", customId: "b1" },
          { content: "Nested metadata is not allowed", customId: "b2", metadata: { deep: { x: 1 } } },
          { content: "Another good one", containerTag: "batch-other" },
          { content: "", customId: "b4" },
        ],
      },
    });
    expect(raw.status).toBe(200);
    const res = (await raw.json()) as BatchAddResponse;
    expect(res.success).toBe(2);
    expect(res.failed).toBe(2);
    expect(res.results[0]).toMatchObject({ status: "queued" });
    expect(res.results[1]).toMatchObject({ id: "b2", status: "error" });
    expect(res.results[1]!.details).toMatch(/documents\.1\.metadata\.deep/);
    expect(res.results[3]).toMatchObject({ id: "b4", status: "error" });
    expect(res.results[3]!.details).toContain("documents.3.content");
    const b1 = await client.ns("batch").documents.waitFor("b1");
    expect(b1.system.status).toBe("done");
    const other = await client.ns("batch-other").documents.list();
    expect(other.documents.map((d) => d.content)).toEqual(["Another good one"]);
    const strings = await client.batch.add({ documents: ["plain one", "plain two"] });
    expect(strings).toMatchObject({ success: 2, failed: 0 });
  });
});

describe("namespaces and organization", () => {
  it("lists namespaces with document counts and pages, at /namespaces and /ns", async () => {
    await client.ns("count-a").documents.add({ content: "one" });
    await client.ns("count-a").documents.add({ content: "two" });
    const all = await client.namespaces.list({ limit: 100 });
    const a = all.namespaces.find((n) => n.namespace === "count-a");
    expect(a).toMatchObject({ documentCount: 2, memoryCount: 0 });
    const alias = await (await server.call("GET", "/ns?limit=100")).json();
    expect(alias).toEqual(all);
    const page = await client.namespaces.list({ limit: 1, page: 2 });
    expect(page.namespaces).toHaveLength(1);
    expect(page.pagination?.totalPages).toBe(all.namespaces.length);
  });

  it("reads, patches and deletes a namespace, moving content with moveTo", async () => {
    const src = client.ns("move-src");
    const d = await src.documents.add({ content: "Moving house.", id: "mv" });
    await src.documents.waitFor(d.id);
    const patched = await src.update({ supportingContext: "Notes about moving." });
    expect(patched).toMatchObject({
      namespace: "move-src",
      supportingContext: "Notes about moving.",
      documentCount: 1,
    });
    expect((await src.get()).supportingContext).toBe("Notes about moving.");
    expect((await src.update({ supportingContext: null })).supportingContext).toBeNull();
    const res = await server.call("DELETE", "/ns/move-src?moveTo=move-dst");
    expect(res.status).toBe(202);
    expect(await res.json()).toHaveProperty("operationId");
    await expect(src.get()).rejects.toBeInstanceOf(NotFoundError);
    const moved = await client.ns("move-dst").documents.get("mv", { include: ["chunks"] });
    expect(moved.chunks?.map((c) => c.content)).toEqual(["Moving house."]);
    // deleting without moveTo removes everything; a body's moveTo is ignored
    const del = await server.call("DELETE", "/ns/move-dst", { body: { moveTo: "elsewhere" } });
    expect(del.status).toBe(202);
    await expect(client.ns("move-dst").get()).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.ns("elsewhere").get()).rejects.toBeInstanceOf(NotFoundError);
  });

  it("reads and patches the organization's shared context", async () => {
    const org = await client.organization.update({ organizationalContext: "We are a bakery." });
    expect(org.organizationalContext).toBe("We are a bakery.");
    expect(org.namespaceCount).toBeGreaterThan(0);
    expect((await client.organization.get()).organizationalContext).toBe("We are a bakery.");
  });
});

describe("isolation", () => {
  it("keeps one namespace's documents out of another's reads, lists and deletes", async () => {
    const a = client.ns("iso-a");
    const doc = await a.documents.add({ content: "Secret of namespace A.", id: "secret" });
    await a.documents.waitFor(doc.id);
    const b = client.ns("iso-b");
    await b.documents.add({ content: "Namespace B content." });
    await expect(b.documents.get("secret")).rejects.toBeInstanceOf(NotFoundError);
    await expect(b.documents.get(doc.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await b.documents.list()).documents.map((d) => d.content)).toEqual(["Namespace B content."]);
    const del = await b.documents.delete([doc.id, "secret"]);
    expect(del.count).toBe(0);
    expect((await a.documents.get("secret")).system.status).toBe("done");
  });

  it("keeps one organization's namespaces out of another's", async () => {
    const otherKey = await createKey(server.engine.context.db, "other-org");
    const other = server.client(otherKey);
    await expect(other.ns("iso-a").documents.get("secret")).rejects.toBeInstanceOf(NotFoundError);
    expect((await other.ns("iso-a").documents.list()).documents).toEqual([]);
    expect((await other.namespaces.list()).namespaces).toEqual([]);
    // the same namespace name in the other organization is a different namespace
    await other.ns("iso-a").documents.add({ content: "Other org's own.", id: "secret" });
    expect((await other.ns("iso-a").documents.get("secret")).content).toBe("Other org's own.");
    expect((await client.ns("iso-a").documents.get("secret")).content).toBe("Secret of namespace A.");
    expect((await other.organization.get()).namespaceCount).toBe(1);
  });

  it("refuses a namespace outside a restricted key's list with 403", async () => {
    const key = await createKey(server.engine.context.db, "local", ["only-this"]);
    expect((await server.call("POST", "/ns/only-this/list/documents", { key })).status).toBe(200);
    const res = await server.call("POST", "/ns/iso-a/list/documents", { key });
    expect(res.status).toBe(403);
    expect((await res.json()).details).toContain("iso-a");
  });
});

describe("authentication", () => {
  it("answers 401 with an ErrorResponse without a key or with an unknown key", async () => {
    for (const key of [null, "mk_unknown_key_123"]) {
      const res = await server.call("GET", "/namespaces", { key });
      expect(res.status).toBe(401);
      expect(await res.json()).toHaveProperty("error");
    }
    await expect(server.client("mk_unknown_key_123").namespaces.list()).rejects.toBeInstanceOf(
      AuthenticationError,
    );
  });

  it("serves /health and /openapi.json without a key", async () => {
    const health = await server.call("GET", "/health", { key: null });
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: "ok",
      database: { backend: "sqlite", schema: SCHEMA_VERSION },
    });
    const doc = await (await server.call("GET", "/openapi.json", { key: null })).json();
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(Object.keys(doc.paths)).toContain("/ns/{namespace}/document");
  });

  it("routes every endpoint of the contract", async () => {
    for (const [name, e] of Object.entries(endpoints)) {
      const path = fillPath(e.path, { namespace: "routed", id: "x", type: "documents" });
      const res = await server.call(e.method, path, { body: e.method === "GET" ? undefined : {} });
      const body = (await res.json()) as { details?: string };
      expect(`${name}: ${body.details ?? ""}`).not.toContain("no route for");
    }
  });

  it("answers 405 with Allow for a wrong method on a route that exists, and changes nothing", async () => {
    const put = await server.call("PUT", "/ns/wrong-method/document", { body: { content: "x" } });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("DELETE, POST");
    expect(await put.json()).toMatchObject({ error: "Method not allowed" });

    const onDoc = await server.call("POST", "/ns/wrong-method/document/some-id", { body: {} });
    expect(onDoc.status).toBe(405);
    expect(onDoc.headers.get("allow")).toBe("GET, HEAD");
    const onNs = await server.call("POST", "/ns/wrong-method", { body: {} });
    expect(onNs.headers.get("allow")).toBe("DELETE, GET, HEAD, PATCH");
    expect((await server.call("GET", "/ns/wrong-method/document")).status).toBe(405);
    expect((await server.call("DELETE", "/health")).headers.get("allow")).toBe("GET, HEAD");
    // A route of the right method that finds nothing stays 404.
    expect((await server.call("GET", "/ui/missing.js")).status).toBe(404);
    // Nothing was written: the namespace was never created.
    expect((await server.call("GET", "/ns/wrong-method")).status).toBe(404);
    // Without a key the wrong method still gets 401 first: no route is revealed.
    expect((await server.call("PUT", "/ns/wrong-method/document", { key: null })).status).toBe(401);
  });

  it("answers 404 with an ErrorResponse for an unknown route", async () => {
    const res = await server.call("GET", "/no/such/route");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: "Not found" });
  });
});

describe("bad input: 400 naming the field and the rule, and nothing written", () => {
  const nested = (depth: number): unknown =>
    depth === 0
      ? { field: "a", operator: "eq", value: 1 }
      : { operator: "and", operands: [nested(depth - 1)] };
  const cases: [string, string, string, unknown, RegExp][] = [
    [
      "namespace pattern",
      "POST",
      "/ns/bad%20name/document",
      { content: "x" },
      /namespace.*\^\[a-zA-Z0-9_:-\]\+\$/,
    ],
    [
      "namespace length",
      "POST",
      `/ns/${"n".repeat(101)}/document`,
      { content: "x" },
      /namespace.*at most 100/,
    ],
    ["empty content", "POST", "/ns/bad1/document", { content: "" }, /content/],
    ["missing content", "POST", "/ns/bad1/document", {}, /content/],
    [
      "nested metadata",
      "POST",
      "/ns/bad1/document",
      { content: "x", metadata: { a: { b: 1 } } },
      /metadata\.a/,
    ],
    [
      "entityContext length",
      "POST",
      "/ns/bad1/document",
      { content: "x", entityContext: "e".repeat(1501) },
      /entityContext.*1500/,
    ],
    [
      "supportingContext length",
      "POST",
      "/ns/bad1/document",
      { content: "x", supportingContext: "e".repeat(1501) },
      /supportingContext.*1500/,
    ],
    ["bad date", "POST", "/ns/bad1/document", { content: "x", date: "yesterday" }, /date/],
    ["unknown body field", "POST", "/ns/bad1/document", { content: "x", colour: "red" }, /colour/],
    [
      "bad dreaming in query",
      "POST",
      "/ns/bad1/document?dreaming=sometimes",
      { content: "x" },
      /query\.dreaming/,
    ],
    ["no ids to delete", "DELETE", "/ns/bad1/document", { ids: [] }, /ids.*at least 1/],
    [
      "too many ids to delete",
      "DELETE",
      "/ns/bad1/document",
      { ids: Array.from({ length: 101 }, (_, i) => `i${i}`) },
      /ids.*at most 100/,
    ],
    ["empty batch", "POST", "/v3/documents/batch", { documents: [] }, /documents.*at least 1/],
    [
      "batch too large",
      "POST",
      "/v3/documents/batch",
      { documents: Array.from({ length: 601 }, () => "x") },
      /documents.*at most 600/,
    ],
    [
      "batch containerTag",
      "POST",
      "/v3/documents/batch",
      { documents: ["x"], containerTag: "a b" },
      /containerTag/,
    ],
    ["list limit", "POST", "/ns/bad1/list/documents?limit=101", {}, /limit.*at most 100/],
    ["list page", "POST", "/ns/bad1/list/documents?page=0", {}, /page.*at least 1/],
    ["list sort", "POST", "/ns/bad1/list/documents?sort=size", {}, /sort/],
    ["list type", "POST", "/ns/bad1/list/things", {}, /type/],
    ["filter depth", "POST", "/ns/bad1/list/documents", { filter: nested(6) }, /filter.*5 levels/],
    [
      "filter operands",
      "POST",
      "/ns/bad1/list/documents",
      { filter: { operator: "or", operands: Array.from({ length: 201 }, () => nested(0)) } },
      /operands.*200/,
    ],
    [
      "filter field",
      "POST",
      "/ns/bad1/list/documents",
      { filter: { field: "a b", operator: "eq", value: 1 } },
      /field/,
    ],
    ["namespaces limit", "GET", "/namespaces?limit=1000", undefined, /limit.*at most 100/],
    ["patch namespace", "PATCH", "/ns/bad1", { supportingContext: 5 }, /supportingContext/],
    ["moveTo pattern", "DELETE", "/ns/bad1?moveTo=no%20way", undefined, /moveTo/],
    ["malformed JSON", "POST", "/ns/bad1/document", "{content:", /JSON/],
  ];

  it.each(cases)("%s", async (_name, method, path, body, detail) => {
    const res = await server.call(method, path, { body });
    expect(res.status).toBe(400);
    const json = (await res.json()) as { error: string; details?: string };
    expect(json.error).toBeTruthy();
    expect(json.details).toMatch(detail);
  });

  it("wrote nothing for any rejected request", async () => {
    const res = await server.call("GET", "/ns/bad1");
    expect(res.status).toBe(404);
    const list = await client.namespaces.list({ limit: 100 });
    expect(list.namespaces.map((n) => n.namespace)).not.toContain("bad1");
  });

  it("answers 413 to a body over the size limit, declared or streamed", async () => {
    const big = JSON.stringify({ content: "x".repeat(REQUEST_BODY_MAX_BYTES) });
    const res = await server.call("POST", "/ns/big/document", { body: big });
    expect(res.status).toBe(413);
    expect(await res.json()).toHaveProperty("error");
    // no Content-Length: the streamed bytes are counted
    const chunk = new Uint8Array(1024 * 1024).fill(0x61);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > REQUEST_BODY_MAX_BYTES) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const streamed = await server.engine.fetch(
      new Request("http://in-process/ns/big/document", {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
    expect((await server.call("GET", "/ns/big")).status).toBe(404);
  });

  it("lets the client read an answer given before the body was read (413, 401), not a reset, five times of five", async () => {
    const tooLarge = "x".repeat(REQUEST_BODY_MAX_BYTES + 1);
    const stranger = server.client("mk_not_a_key_of_this_server");
    const eightMegabytes = "y".repeat(8 * 1024 * 1024);
    for (let i = 0; i < 5; i++) {
      await expect(client.ns("big").documents.add({ content: tooLarge })).rejects.toBeInstanceOf(
        PayloadTooLargeError,
      );
      await expect(stranger.ns("big").documents.add({ content: eightMegabytes })).rejects.toBeInstanceOf(
        AuthenticationError,
      );
      // Streamed with no Content-Length: answered once the count passes the limit, the rest drained.
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > 2 * REQUEST_BODY_MAX_BYTES) return controller.close();
          sent += 1024 * 1024;
          controller.enqueue(new Uint8Array(1024 * 1024).fill(0x61));
        },
      });
      const streamed = await fetch(`${server.url}/ns/big/document`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit);
      expect(streamed.status).toBe(413);
      await streamed.text();
    }
    // The connections were drained, not broken: the server goes on answering.
    expect((await server.call("GET", "/ns/big")).status).toBe(404);
  });
});
