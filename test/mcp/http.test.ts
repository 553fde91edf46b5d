import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { createKey, LOCAL_ORGANIZATION } from "../../src/engine/store/organizations.js";
import { type McpHttpServer, startHttpServer } from "../../src/mcp/http.js";
import { API_KEY, call, startEngine, structured, type TestEngine, text } from "./helpers.js";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

function post(url: string, headers: Record<string, string>, body: unknown = INITIALIZE) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** fetch() may not set Host; node:http may. Resolves to the status, or to what `read` makes of the body. */
function postWithHost(url: string, host: string): Promise<number>;
function postWithHost(url: string, host: string, read: (body: string) => string): Promise<string>;
function postWithHost(url: string, host: string, read?: (body: string) => string): Promise<number | string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        headers: {
          host,
          authorization: `Bearer ${API_KEY}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
      },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () => resolve(read ? read(body) : (res.statusCode ?? 0)));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(INITIALIZE));
  });
}

describe("MCP over Streamable HTTP", () => {
  let t: TestEngine;
  let http: McpHttpServer;
  let aliceOnlyKey: string;
  const clients: Client[] = [];

  async function session(opts: { key?: string; header?: string; query?: string }) {
    const url = new URL(http.url);
    if (opts.query) url.searchParams.set("namespace", opts.query);
    const headers: Record<string, string> = { authorization: `Bearer ${opts.key ?? API_KEY}` };
    if (opts.header) headers["x-memctx-namespace"] = opts.header;
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
    const client = new Client({ name: "http-test", version: "1" });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  beforeAll(async () => {
    t = await startEngine();
    aliceOnlyKey = await createKey(t.engine.context.db, LOCAL_ORGANIZATION, ["alice"]);
    http = await startHttpServer({
      clientFor: (key) => new MemoryClient({ apiKey: key, fetch: t.engine.fetch, maxRetries: 0 }),
      defaultNamespace: "default",
      port: 0,
      keyHint: "the key in /data/mcp-local.key",
    });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await http.close();
    await t.close();
  });

  it("binds 127.0.0.1 by default and serves /mcp", () => {
    expect(http.url).toBe(`http://127.0.0.1:${http.port}/mcp`);
  });

  it("keeps two sessions in two namespaces apart", async () => {
    const alice = await session({ header: "alice" });
    const bob = await session({ query: "bob" });
    await call(alice.client, "add_memory", { content: "Alice's locker code is 4417", wait: true });
    await call(bob.client, "add_memory", { content: "Bob's favourite band is Low", wait: true });

    const aliceDocs = structured<{ documents: { id: string }[] }>(await call(alice.client, "list"));
    const bobDocs = structured<{ documents: { id: string }[] }>(await call(bob.client, "list"));
    expect(aliceDocs.documents).toHaveLength(1);
    expect(bobDocs.documents).toHaveLength(1);
    expect(aliceDocs.documents[0]?.id).not.toBe(bobDocs.documents[0]?.id);

    expect((await alice.client.listResources()).resources.map((r) => r.uri)).toEqual([
      "memctx://profile/alice",
    ]);
    expect((await bob.client.listResources()).resources.map((r) => r.uri)).toEqual(["memctx://profile/bob"]);
    await expect(alice.client.readResource({ uri: "memctx://profile/bob" })).rejects.toThrow(
      /bound to namespace alice/,
    );
    const aliceContent = await t.client.ns("alice").documents.list();
    expect(aliceContent.documents.map((d) => d.content ?? "")).not.toContain("Bob's favourite band is Low");
  });

  it("never reads a local file path over HTTP: add_memory says so and stores nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "memctx-http-file-"));
    try {
      const path = join(dir, "secret.txt");
      writeFileSync(path, "The server's own secret file");
      const { client } = await session({ header: "httpfile" });
      const res = await call(client, "add_memory", { file: path });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/only by a memctx running on your machine \(stdio\).*over HTTP/);
      expect((await t.client.ns("httpfile").documents.list()).documents).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("answers 401 without a key or with an unknown one", async () => {
    const none = await post(http.url, {});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const wrong = await post(http.url, { authorization: "Bearer mk_not_a_key" });
    expect(wrong.status).toBe(401);
  });

  it("says where the key is in the 401, and answers OAuth discovery with bearer-key metadata", async () => {
    const none = await post(http.url, {});
    expect(await none.text()).toMatch(/Bearer <key> \(the key in \/data\/mcp-local\.key\).*not OAuth/);
    const origin = new URL(http.url).origin;
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      const res = await fetch(`${origin}${path}`);
      expect(res.status, path).toBe(200);
      const meta = (await res.json()) as Record<string, unknown>;
      expect(meta).toMatchObject({
        resource: `${origin}/mcp`,
        authorization_servers: [],
        bearer_methods_supported: ["header"],
      });
      expect(meta.resource_documentation).toContain("/data/mcp-local.key");
    }
  });

  it("answers 405 with Allow for a method /mcp does not take", async () => {
    const res = await fetch(http.url, { method: "PUT", headers: { authorization: `Bearer ${API_KEY}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, POST, DELETE");
  });

  it("lets a key limited to some namespaces open only those (403 elsewhere)", async () => {
    const ok = await session({ key: aliceOnlyKey, header: "alice" });
    expect((await ok.client.listResources()).resources[0]?.uri).toBe("memctx://profile/alice");
    const refused = await post(http.url, {
      authorization: `Bearer ${aliceOnlyKey}`,
      "x-memctx-namespace": "bob",
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/may not use namespace bob/);
  });

  it("answers 400 for a namespace that breaks the rule", async () => {
    const res = await post(http.url, {
      authorization: `Bearer ${API_KEY}`,
      "x-memctx-namespace": "no spaces",
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/must match/);
  });

  it("refuses a foreign Origin and a foreign Host with 403", async () => {
    const evil = await post(http.url, { authorization: `Bearer ${API_KEY}`, origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    const own = await post(http.url, {
      authorization: `Bearer ${API_KEY}`,
      origin: `http://localhost:${http.port}`,
    });
    expect(own.status).toBe(200);
    expect(await postWithHost(http.url, `rebind.example:${http.port}`)).toBe(403);
    expect(await postWithHost(http.url, `rebind.example:${http.port}`, (b) => b)).toMatch(
      new RegExp(`--allowed-host rebind\\.example:${http.port}`),
    );
    expect(await postWithHost(http.url, `localhost:${http.port}`)).toBe(200);
  });

  it("refuses a session's id presented with another key", async () => {
    const s = await session({ header: "alice" });
    const res = await post(
      http.url,
      {
        authorization: `Bearer ${aliceOnlyKey}`,
        "mcp-session-id": s.transport.sessionId!,
        "mcp-protocol-version": "2025-06-18",
      },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    );
    expect(res.status).toBe(403);
  });

  it("cleans up a session closed with DELETE", async () => {
    const s = await session({ header: "alice" });
    const id = s.transport.sessionId!;
    const before = http.sessionCount();
    await s.transport.terminateSession();
    expect(http.sessionCount()).toBe(before - 1);
    const res = await post(
      http.url,
      { authorization: `Bearer ${API_KEY}`, "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    );
    expect(res.status).toBe(404);
  });

  it("expires a session that stays idle", async () => {
    const short = await startHttpServer({
      clientFor: (key) => new MemoryClient({ apiKey: key, fetch: t.engine.fetch }),
      defaultNamespace: "default",
      port: 0,
      idleTimeoutMs: 200,
    });
    try {
      const transport = new StreamableHTTPClientTransport(new URL(short.url), {
        requestInit: { headers: { authorization: `Bearer ${API_KEY}` } },
      });
      const client = new Client({ name: "idle", version: "1" });
      await client.connect(transport);
      expect(short.sessionCount()).toBe(1);
      await vi.waitFor(() => expect(short.sessionCount()).toBe(0), { timeout: 5_000, interval: 50 });
      await client.close().catch(() => {});
    } finally {
      await short.close();
    }
  });
});
