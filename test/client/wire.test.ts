import { describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { VERSION } from "../../src/version.js";
import {
  documentBody,
  emptyList,
  type Received,
  scriptedServerPerFile,
  ts,
} from "../support/scripted-server.js";

const { server, client } = scriptedServerPerFile({ maxRetries: 0 });

const last = (): Received => server.received.at(-1)!;
const memory = { id: "m1", memory: "Alice likes tea" };
const connector = { id: "c1", provider: "web-crawler" };
const nsRecord = {
  namespace: "alice",
  supportingContext: null,
  documentCount: 0,
  memoryCount: 0,
  system: ts,
};

describe("wire format", () => {
  it("sends the bearer key, a memctx User-Agent and JSON content type on every request", async () => {
    server.reply({ json: { id: "d1", status: "queued" } });
    await client.ns("alice").documents.add({ content: "hello" });
    const r = last();
    expect(r.headers.authorization).toBe("Bearer mk_test");
    expect(r.headers["user-agent"]).toBe(`memctx/${VERSION}`);
    expect(r.headers["content-type"]).toBe("application/json");
    server.reply({ json: { organizationalContext: null, namespaceCount: 0 } });
    await client.organization.get();
    expect(last().headers.authorization).toBe("Bearer mk_test");
    expect(last().body).toBe("");
  });

  it("sends an upload as multipart/form-data: the file part with its name and type, objects as JSON text", async () => {
    server.reply({ json: { id: "doc-f", status: "queued" } });
    const res = await client.ns("alice").documents.addFile({
      file: new File(["# Plan\nShip it"], "plan.md", { type: "text/markdown" }),
      id: "plan",
      metadata: { topic: "work" },
      dreaming: "instant",
    });
    expect(res).toEqual({ id: "doc-f", status: "queued" });
    const r = last();
    expect(r.path).toBe("/ns/alice/document/file");
    expect(r.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    // Parsed back with the platform's own multipart reader.
    const form = await new Response(r.body, {
      headers: { "content-type": r.headers["content-type"]! },
    }).formData();
    const file = form.get("file") as File;
    expect([file.name, file.type, await file.text()]).toEqual([
      "plan.md",
      "text/markdown",
      "# Plan\nShip it",
    ]);
    expect(form.get("id")).toBe("plan");
    expect(form.get("metadata")).toBe('{"topic":"work"}');
    expect(form.get("dreaming")).toBe("instant");

    server.reply({ json: { id: "doc-g", status: "queued" } });
    await client.legacy.documents.addFile({
      file: new Uint8Array([1, 2, 3]),
      filename: "raw.bin",
      containerTags: ["alice"],
      customId: "raw",
    });
    const legacy = await new Response(last().body, {
      headers: { "content-type": last().headers["content-type"]! },
    }).formData();
    expect(last().path).toBe("/v3/documents/file");
    expect((legacy.get("file") as File).name).toBe("raw.bin");
    expect(legacy.get("containerTags")).toBe('["alice"]');
  });

  it("refuses to send an upload without a file or with a bad field", async () => {
    await expect(
      client.ns("alice").documents.addFile({ file: new Uint8Array(0), filename: "empty.txt" }),
    ).rejects.toThrow(/file must not be empty/);
    await expect(
      client.ns("alice").documents.addFile({ file: new Uint8Array([1]), taskType: "nope" as never }),
    ).rejects.toThrow(/taskType/);
    expect(server.received).toHaveLength(0);
  });

  it("puts dreaming and taskType of an add in the query and everything else in the body", async () => {
    server.reply({ json: { id: "doc-1", status: "queued" } });
    const res = await client.ns("alice").documents.add({
      content: "Alice moved to Berlin",
      id: "doc-1",
      metadata: { topic: "home", tags: ["a", "b"] },
      date: "2024-05-07",
      supportingContext: "Alice is a user",
      dreaming: "instant",
      taskType: "memory",
    });
    expect(res).toEqual({ id: "doc-1", status: "queued" });
    const r = last();
    expect(r.method).toBe("POST");
    expect(r.path).toBe("/ns/alice/document");
    expect(Object.fromEntries(r.query)).toEqual({ dreaming: "instant", taskType: "memory" });
    expect(r.json).toEqual({
      content: "Alice moved to Berlin",
      id: "doc-1",
      metadata: { topic: "home", tags: ["a", "b"] },
      date: "2024-05-07",
      supportingContext: "Alice is a user",
    });
  });

  it("URI-encodes ids with special characters as one path segment", async () => {
    const id = "a/b c?d#e%f&é";
    server.reply({ json: documentBody(id) });
    await client.ns("team:x_1-2").documents.get(id);
    expect(last().path).toBe(`/ns/team%3Ax_1-2/document/${encodeURIComponent(id)}`);
    expect(last().path).toBe("/ns/team%3Ax_1-2/document/a%2Fb%20c%3Fd%23e%25f%26%C3%A9");
    server.reply({ json: memory });
    await client.ns("alice").memories.get("m/1");
    expect(last().path).toBe("/ns/alice/memories/m%2F1");
    server.reply({ json: connector });
    await client.ns("alice").connectors.get("c 1");
    expect(last().path).toBe("/ns/alice/connectors/c%201");
  });

  it("sends include lists as comma-separated query values on reads", async () => {
    server.reply({ json: documentBody("d1", "done", "done", { chunks: [], memories: [] }) });
    const doc = await client.ns("alice").documents.get("d1", { include: ["chunks", "memories"] });
    expect(doc.chunks).toEqual([]);
    expect(last().method).toBe("GET");
    expect(last().target).toBe("/ns/alice/document/d1?include=chunks,memories");

    server.reply({ json: memory });
    await client.ns("alice").memories.get("m1", { include: ["related", "documents"], relatedLimit: 5 });
    expect(last().target).toBe("/ns/alice/memories/m1?include=related,documents&relatedLimit=5");

    server.reply({ json: connector });
    await client.ns("alice").connectors.get("c1", { include: ["syncs"] });
    expect(last().target).toBe("/ns/alice/connectors/c1?include=syncs");
  });

  it("keeps list pagination in the query and the filter in the body, for each list type", async () => {
    const filter = { field: "topic", operator: "eq", value: "home" } as const;
    for (const [type, call] of [
      [
        "documents",
        () =>
          client
            .ns("alice")
            .documents.list({ page: 2, limit: 50, sort: "updatedAt", order: "asc" }, { filter }),
      ],
      [
        "chunks",
        () =>
          client.ns("alice").chunks.list({ page: 2, limit: 50, sort: "updatedAt", order: "asc" }, { filter }),
      ],
      [
        "memories",
        () =>
          client
            .ns("alice")
            .memories.list(
              { page: 2, limit: 50, sort: "updatedAt", order: "asc" },
              { filter, include: { forgotten: true } },
            ),
      ],
    ] as const) {
      server.reply({ json: emptyList });
      const res = await call();
      expect(res.pagination.currentPage).toBe(1);
      const r = last();
      expect(r.method).toBe("POST");
      expect(r.path).toBe(`/ns/alice/list/${type}`);
      expect(Object.fromEntries(r.query)).toEqual({
        page: "2",
        limit: "50",
        sort: "updatedAt",
        order: "asc",
      });
      expect(r.json).toEqual(type === "memories" ? { filter, include: { forgotten: true } } : { filter });
    }
  });

  it("sends a list without options as an empty body and no query", async () => {
    server.reply({ json: emptyList });
    await client.ns("alice").documents.list();
    expect(last().target).toBe("/ns/alice/list/documents");
    expect(last().json).toEqual({});
  });

  it("puts every search option in the body", async () => {
    server.reply({ json: { results: [{ id: "m1", memory: "x", similarity: 0.9 }], searchTime: 3 } });
    const body = {
      query: "where does Alice live",
      searchMode: "memories",
      limit: 5,
      threshold: 0.5,
      filter: { field: "topic", operator: "eq", value: "home" },
      include: { documents: true, related: true },
      rerank: "order",
      rewriteQuery: false,
    } as const;
    const res = await client.ns("alice").search(body);
    expect(res.results[0]?.similarity).toBe(0.9);
    expect(last().target).toBe("/ns/alice/search");
    expect(last().json).toEqual(body);
  });

  it("sends deletes and forgets with their ids in a JSON body", async () => {
    server.reply({ json: { count: 2, errors: [] } });
    await client.ns("alice").documents.delete(["d1", "d2"]);
    expect([last().method, last().target, last().json]).toEqual([
      "DELETE",
      "/ns/alice/document",
      { ids: ["d1", "d2"] },
    ]);
    server.reply({ json: { count: 1, matches: [memory], errors: [] } });
    await client.ns("alice").memories.forget(["m1"]);
    expect([last().method, last().target, last().json]).toEqual([
      "DELETE",
      "/ns/alice/memories",
      { ids: ["m1"] },
    ]);
    server.reply({ json: { count: 0, matches: [memory], errors: [] } });
    await client.ns("alice").memories.forgetSemantic({ query: "tea", dryRun: true });
    expect([last().method, last().target, last().json]).toEqual([
      "DELETE",
      "/ns/alice/memories/semantic",
      { query: "tea", dryRun: true },
    ]);
  });

  it("sends profile and bucket calls to their paths with their bodies", async () => {
    server.reply({ json: { profile: { static: [memory], dynamic: [], buckets: {} } } });
    const p = await client.ns("alice").profile.get({ buckets: ["work"] });
    expect(p.profile.static).toEqual([memory]);
    expect([last().method, last().target, last().json]).toEqual([
      "POST",
      "/ns/alice/profile",
      { buckets: ["work"] },
    ]);

    server.reply({ json: { buckets: { preferences: "likes" } } });
    await client.ns("alice").profile.buckets.get();
    expect([last().method, last().target, last().body]).toEqual(["GET", "/ns/alice/profile/buckets", ""]);

    server.reply({ json: { buckets: { work: "job" } } });
    await client.ns("alice").profile.buckets.put({ work: "job" });
    expect([last().method, last().json]).toEqual(["PUT", { buckets: { work: "job" } }]);

    server.reply({ json: { buckets: {} } });
    await client.ns("alice").profile.buckets.delete(["work"]);
    expect([last().method, last().target, last().json]).toEqual([
      "DELETE",
      "/ns/alice/profile/buckets",
      { buckets: ["work"] },
    ]);
  });

  it("sends namespace calls, with moveTo of a namespace delete in the query and no body", async () => {
    server.reply({ json: nsRecord });
    await client.ns("alice").get();
    expect([last().method, last().target]).toEqual(["GET", "/ns/alice"]);

    server.reply({ json: { ...nsRecord, supportingContext: "ctx" } });
    const updated = await client.ns("alice").update({ supportingContext: "ctx" });
    expect(updated.supportingContext).toBe("ctx");
    expect([last().method, last().json]).toEqual(["PATCH", { supportingContext: "ctx" }]);

    server.reply({ status: 202, json: { operationId: "op1" } });
    const op = await client.ns("alice").delete({ moveTo: "archive" });
    expect(op.operationId).toBe("op1");
    expect([last().method, last().target, last().body]).toEqual(["DELETE", "/ns/alice?moveTo=archive", ""]);

    server.reply({ json: { namespaces: [], pagination: { currentPage: 3, totalPages: 3 } } });
    await client.namespaces.list({ page: 3, limit: 20 });
    expect([last().method, last().target]).toEqual(["GET", "/namespaces?page=3&limit=20"]);
  });

  it("sends connector calls, with deleteDocuments of a connector delete in the query", async () => {
    const ns = client.ns("alice");
    server.reply({ json: { id: "c1", authorization: null } });
    await ns.connectors.create({ provider: "web-crawler", config: { startUrl: "https://example.com" } });
    expect([last().method, last().target, last().json]).toEqual([
      "POST",
      "/ns/alice/connectors",
      { provider: "web-crawler", config: { startUrl: "https://example.com" } },
    ]);
    server.reply({ json: { connectors: [connector] } });
    await ns.connectors.list();
    expect([last().method, last().target]).toEqual(["GET", "/ns/alice/connectors"]);
    server.reply({ json: connector });
    await ns.connectors.update("c1", { documentLimit: 500 });
    expect([last().method, last().target, last().json]).toEqual([
      "PATCH",
      "/ns/alice/connectors/c1",
      { documentLimit: 500 },
    ]);
    server.reply({ status: 202, json: { id: "c1", runId: "r1", status: "running" } });
    await ns.connectors.sync("c1");
    expect([last().method, last().target, last().body]).toEqual(["POST", "/ns/alice/connectors/c1/sync", ""]);
    server.reply({ json: { id: "c1", deleted: true, documentsDeleted: 4 } });
    await ns.connectors.delete("c1", { deleteDocuments: true });
    expect([last().method, last().target, last().body]).toEqual([
      "DELETE",
      "/ns/alice/connectors/c1?deleteDocuments=true",
      "",
    ]);
    server.reply({ json: { connectors: [] } });
    await client.connectors.listAll();
    expect([last().method, last().target]).toEqual(["GET", "/connectors"]);
  });

  it("sends organization and batch calls to their paths", async () => {
    server.reply({ json: { organizationalContext: "we are a team", namespaceCount: 2 } });
    await client.organization.update({ organizationalContext: "we are a team" });
    expect([last().method, last().target, last().json]).toEqual([
      "PATCH",
      "/organization",
      { organizationalContext: "we are a team" },
    ]);
    server.reply({ json: { results: [{ id: "d1", status: "queued" }], failed: 0, success: 1 } });
    await client.batch.add({ documents: ["one"], containerTag: "alice" });
    expect([last().method, last().target, last().json]).toEqual([
      "POST",
      "/v3/documents/batch",
      { documents: ["one"], containerTag: "alice" },
    ]);
  });

  it("keeps unknown response fields (loose parsing)", async () => {
    server.reply({ json: { ...documentBody("d1"), futureField: { x: 1 } } });
    const doc = await client.ns("alice").documents.get("d1");
    expect(doc.futureField).toEqual({ x: 1 });
  });

  it("joins a base URL with a trailing slash or a path prefix", async () => {
    const c = new MemoryClient({ baseUrl: `${server.url}/prefix/`, apiKey: "k", maxRetries: 0 });
    try {
      server.reply({ json: { organizationalContext: null, namespaceCount: 0 } });
      await c.organization.get();
      expect(last().target).toBe("/prefix/organization");
    } finally {
      await c.close();
    }
  });

  it("reuses connections across consecutive requests (keep-alive)", async () => {
    for (let i = 0; i < 6; i++) {
      server.reply({ json: { organizationalContext: null, namespaceCount: 0 } });
      await client.organization.get();
    }
    const ports = new Set(server.received.map((r) => r.remotePort));
    expect(server.received).toHaveLength(6);
    // undici may open a second socket while the first is being released; never one per request.
    expect(ports.size).toBeLessThan(3);
  });
});
