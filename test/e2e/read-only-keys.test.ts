/**
 * Read-only keys end to end, with real processes: `memctx keys create --read-only` on a real
 * data directory, `memctx serve` answering every endpoint of the contract that writes with 403
 * (and changing nothing) while reads go on, and the MCP write tools refusing with an isError
 * result over stdio to that server and over streamable HTTP with the key as the bearer.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Endpoint, endpoints, fillPath, writes } from "../../src/api/endpoints.js";
import { READ_ONLY_KEY } from "../../src/api/errors.js";
import { MemoryClient } from "../../src/client/index.js";
import {
  ROOT,
  type ServeChild,
  spawnMcpHttp,
  spawnServe,
  stopChild,
  TEST_KEY,
  tempDir,
} from "../support/harness.js";
import { until } from "../support/wait.js";

const run = promisify(execFile);
const memctx = (...args: string[]) =>
  run(process.execPath, ["--import", "tsx", join(ROOT, "src/cli/main.ts"), ...args], { cwd: ROOT });

const dir = tempDir("memctx-read-only-");
let serve: ServeChild;
let readOnlyKey: string;
let listed: string;
let documentId: string;
let connectorId: string;

beforeAll(async () => {
  serve = await spawnServe(dir.path);
  readOnlyKey = (await memctx("keys", "create", "--read-only", "--data-dir", dir.path)).stdout.trim();
  listed = (await memctx("keys", "list", "--data-dir", dir.path)).stdout;
  // Something to read, and to fail to change: a document with its memories, and a connector.
  const owner = new MemoryClient({ baseUrl: serve.url, apiKey: TEST_KEY, maxRetries: 0 });
  const ns = owner.ns("ro");
  const doc = await ns.documents.add({ content: "Priya leads the Falcon project. The launch is in March." });
  await ns.documents.waitFor(doc.id, { until: "memories" });
  documentId = doc.id;
  const connector = await ns.connectors.create({
    provider: "web-crawler",
    config: { startUrl: "http://127.0.0.1:9/" },
    syncIntervalSeconds: 0,
  });
  connectorId = connector.id;
  // Its first sync runs at creation (and fails: a loopback address): let it end before the
  // tests compare what is stored.
  await until(
    async () => (await ns.connectors.get(connectorId)).latestRun?.system.status,
    (status) => status !== "queued" && status !== "running",
    "the connector's first sync to end",
  );
  await owner.close();
});
afterAll(async () => {
  await stopChild(serve);
  dir.remove();
});

const call = (method: string, path: string, key: string, body?: BodyInit, type = "application/json") =>
  fetch(`${serve.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": type }) },
    ...(body === undefined ? {} : { body }),
  });

/** What the owner sees of the namespace: refused writes must leave all of it as it was. */
async function state() {
  const get = async (path: string, body?: string) =>
    (await call(body === undefined ? "GET" : "POST", path, TEST_KEY, body)).text();
  return [
    await get("/namespaces"),
    await get("/ns/ro"),
    await get("/organization"),
    await get(`/ns/ro/connectors/${connectorId}`),
    await get("/ns/ro/list/documents", "{}"),
    await get("/ns/ro/list/memories", "{}"),
    await get("/ns/ro/profile/buckets"),
  ].map((s) => s.replace(/"(lastUsedAt|updatedAt)":"[^"]*"/g, ""));
}

const MULTIPART = "multipart/form-data; boundary=B";
const form =
  '--B\r\nContent-Disposition: form-data; name="containerTag"\r\n\r\nro\r\n' +
  '--B\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--B--\r\n';

/** A request each endpoint would take from a read-write key (near enough: writes are refused before the body is read). */
function requestFor(name: string, e: Endpoint): { path: string; body?: string; type?: string } {
  const id = name.toLowerCase().includes("connector") ? connectorId : documentId;
  const path = fillPath(e.path, { namespace: "ro", id, type: "memories" });
  if (e.method === "GET") return { path };
  if (e.bodyType === "multipart") return { path, body: form, type: MULTIPART };
  const bodies: Record<string, unknown> = {
    search: { query: "Falcon" },
    legacySearch: { q: "Falcon" },
    legacyListMemories: { containerTags: ["ro"] },
    legacyProfile: { containerTag: "ro" },
    legacyBuckets: { containerTag: "ro" },
    addDocument: { content: "Read-only keys must not add this." },
    legacyAddDocument: { content: "Read-only keys must not add this.", containerTag: "ro" },
    legacyAddMemories: { memories: [{ content: "Must not be added" }], containerTag: "ro" },
    deleteDocuments: { ids: [documentId] },
    deleteNamespace: undefined,
    patchNamespace: { supportingContext: "changed" },
    patchOrganization: { organizationalContext: "changed" },
    forgetSemantic: { query: "Falcon" },
    legacyForgetMatching: { query: "Falcon", containerTag: "ro" },
  };
  return { path, body: JSON.stringify(bodies[name] ?? {}) };
}

describe("read-only keys", () => {
  it("memctx keys list says which key is read-only", () => {
    const line = listed.split("\n").find((l) => l.startsWith(readOnlyKey.slice(0, 11)));
    expect(line).toContain("read-only");
    const others = listed.split("\n").filter((l) => l.trim() && !l.startsWith(readOnlyKey.slice(0, 11)));
    expect(others.length).toBeGreaterThan(0);
    for (const l of others) expect(l).toContain("read-write");
  });

  it("every endpoint that writes answers 403 naming the rule, and nothing changes; every read answers", async () => {
    const before = await state();
    const writing = Object.entries(endpoints).filter(([, e]) => writes(e));
    // The contract's writes: documents (JSON, batch, both uploads), memories, forget, buckets,
    // namespace and organization settings, connectors, and the legacy v3/v4 writes.
    expect(writing.length).toBeGreaterThanOrEqual(24);
    for (const [name, e] of writing) {
      const { path, body, type } = requestFor(name, e);
      const res = await call(e.method, path, readOnlyKey, body, type);
      const answer = (await res.json()) as { error: string; details?: string };
      expect(res.status, `${name}: ${JSON.stringify(answer)}`).toBe(403);
      expect(answer.error, name).toBe(READ_ONLY_KEY);
      expect(answer.details, name).toContain(`${e.method} ${e.path} writes`);
    }
    expect(await state()).toEqual(before);

    for (const [name, e] of Object.entries(endpoints).filter(([, e]) => !writes(e))) {
      const { path, body } = requestFor(name, e);
      const res = await call(e.method, path, readOnlyKey, body);
      // A read answers (a memory id the test does not know is a 404, not a refusal).
      expect([200, 404], `${name}: ${await res.clone().text()}`).toContain(res.status);
    }
  });

  it("the same request from a read-write key is taken (the refusal is the key's, not the request's)", async () => {
    const body = JSON.stringify({ supportingContext: "changed" });
    expect((await call("PATCH", "/ns/ro", readOnlyKey, body)).status).toBe(403);
    const res = await call("PATCH", "/ns/ro", TEST_KEY, body);
    expect(res.status, await res.clone().text()).toBe(200);
  });
});

const toolText = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** The MCP write tools each refuse, saying the key is read-only; search still answers. */
async function expectWritesRefused(client: Client) {
  const calls: [string, Record<string, unknown>][] = [
    ["add_memory", { content: "Must not be added" }],
    ["forget", { documentIds: [documentId] }],
    ["forget", { query: "Falcon" }],
    [
      "connect_source",
      { action: "connect", provider: "web-crawler", config: { startUrl: "http://127.0.0.1:9/" } },
    ],
    ["connect_source", { action: "sync", id: connectorId }],
  ];
  for (const [name, args] of calls) {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(r.isError, `${name} ${JSON.stringify(args)}: ${toolText(r)}`).toBe(true);
    expect(toolText(r)).toMatch(/read-only/);
  }
  const found = (await client.callTool({
    name: "search",
    arguments: { query: "Falcon project" },
  })) as CallToolResult;
  expect(found.isError ?? false, toolText(found)).toBe(false);
  expect(toolText(found)).toContain("Falcon");
}

describe("MCP write tools refuse a read-only key", () => {
  it("over stdio, to the server (MEMCTX_API_URL)", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "mcp", "--namespace", "ro"],
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: dir.path,
        MEMCTX_API_URL: serve.url,
        MEMCTX_API_KEY: readOnlyKey,
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "read-only-stdio", version: "1" });
    await client.connect(transport);
    try {
      const before = await state();
      await expectWritesRefused(client);
      expect(await state()).toEqual(before);
    } finally {
      await client.close();
    }
  });

  it("over streamable HTTP, the read-only key as the session's bearer key: only the read tools are listed", async () => {
    const mcp = await spawnMcpHttp({ HOME: dir.path, MEMCTX_API_URL: serve.url });
    const client = new Client({ name: "read-only-http", version: "1" });
    const writer = new Client({ name: "read-write-http", version: "1" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcp.url), {
          requestInit: { headers: { authorization: `Bearer ${readOnlyKey}`, "x-memctx-namespace": "ro" } },
        }),
      );
      const before = await state();
      const listed = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(listed).toEqual(["get_profile", "list", "search"]);
      for (const name of ["add_memory", "forget", "connect_source"]) {
        const r = (await client
          .callTool({ name, arguments: { content: "Must not be added", query: "Falcon" } })
          .catch((err: Error) => ({
            isError: true,
            content: [{ type: "text", text: err.message }],
          }))) as CallToolResult;
        expect(r.isError, name).toBe(true);
      }
      const found = (await client.callTool({
        name: "search",
        arguments: { query: "Falcon project" },
      })) as CallToolResult;
      expect(toolText(found)).toContain("Falcon");
      expect(await state()).toEqual(before);
      // The same server lists every tool to a read-write key's session: the probe changed nothing.
      await writer.connect(
        new StreamableHTTPClientTransport(new URL(mcp.url), {
          requestInit: { headers: { authorization: `Bearer ${TEST_KEY}`, "x-memctx-namespace": "ro" } },
        }),
      );
      expect((await writer.listTools()).tools.map((t) => t.name)).toContain("add_memory");
      expect(await state()).toEqual(before);
      await writer.close().catch(() => {});
    } finally {
      await client.close().catch(() => {});
      await mcp.stop();
    }
  });
});
