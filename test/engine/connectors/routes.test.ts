import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp, errorHandler } from "../../../src/engine/app.js";
import { bearerAuth } from "../../../src/engine/auth.js";
import { type Engine, openEngine } from "../../../src/engine/index.js";
import { connectorCallbackRoute, connectorRoutes } from "../../../src/engine/routes/connectors.js";
import type { EngineEnv } from "../../../src/engine/routes/route.js";

/**
 * The connector endpoints over HTTP semantics (Request in, Response out), mounted as app.ts is
 * asked to: the callback before bearer auth, the rest after it.
 */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = any;
let dir: string;
let engine: Engine;
let key: string;
let call: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: Json }>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "memctx-connector-routes-"));
  // No workers: runs stay queued, so a second trigger is a conflict.
  engine = await openEngine({
    dataDir: dir,
    workers: 0,
    allowPrivateNetwork: true,
    embedder: null,
    log: () => {},
  });
  key = await engine.createKey();
  const app = createApp(engine.context);
  connectorCallbackRoute(app, engine.context);
  connectorRoutes(app, engine.context);
  call = async (method, path, body) => {
    const res = await app.fetch(
      new Request(`http://memctx.local${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    );
    return { status: res.status, json: await res.json() };
  };
});

afterEach(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("connector routes", () => {
  it("creates, lists, reads, changes, syncs (409 while running) and deletes a config connector", async () => {
    const created = await call("POST", "/ns/team/connectors", {
      provider: "web-crawler",
      config: { startUrl: "https://docs.example.com" },
      documentLimit: 50,
    });
    expect(created.status).toBe(200);
    expect(created.json).toEqual({ id: expect.stringMatching(/^con_/), authorization: null });
    const id = created.json.id as string;

    const list = await call("GET", "/ns/team/connectors");
    expect(list.json.connectors).toHaveLength(1);
    expect(list.json.connectors[0]).toMatchObject({
      id,
      provider: "web-crawler",
      namespace: "team",
      documentLimit: 50,
      config: { startUrl: "https://docs.example.com/" },
      latestRun: { system: { status: "queued" } },
    });
    expect((await call("GET", "/connectors")).json.connectors.map((c: { id: string }) => c.id)).toEqual([id]);
    expect((await call("GET", "/ns/other/connectors")).json.connectors).toEqual([]);

    const sync = await call("POST", `/ns/team/connectors/${id}/sync`);
    expect(sync.status).toBe(409);
    expect(sync.json.error).toBe("A sync is already running");

    const patched = await call("PATCH", `/ns/team/connectors/${id}`, {
      selection: { paths: ["/guide"] },
      documentLimit: 10,
    });
    expect(patched.json).toMatchObject({ selection: { paths: ["/guide"] }, documentLimit: 10 });
    expect((await call("GET", `/ns/team/connectors/${id}?include=syncs`)).json.syncs).toHaveLength(1);
    expect((await call("GET", `/ns/other/connectors/${id}`)).status).toBe(404);

    const deleted = await call("DELETE", `/ns/team/connectors/${id}?deleteDocuments=true`);
    expect(deleted.json).toEqual({ id, deleted: true, documentsDeleted: 0 });
    expect((await call("GET", `/ns/team/connectors/${id}`)).status).toBe(404);
  });

  it("connects GitHub at once when config carries a personal access token", async () => {
    const created = await call("POST", "/ns/team/connectors", {
      provider: "github",
      config: { token: "ghp_x" },
    });
    expect(created.json).toEqual({ id: expect.stringMatching(/^con_/), authorization: null });
    const read = await call("GET", `/ns/team/connectors/${created.json.id}`);
    expect(read.json.config).toEqual({ token: "[redacted]" });
  });

  it("answers 400 naming the field for bad input", async () => {
    const bad = await call("POST", "/ns/team/connectors", {
      provider: "web-crawler",
      config: { startUrl: 42 },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.details).toContain("config.startUrl");
    const unknown = await call("POST", "/ns/team/connectors", { provider: "dropbox" });
    expect(unknown.status).toBe(400);
    expect(unknown.json.details).toContain("provider");
    const noApp = await call("POST", "/ns/team/connectors", {
      provider: "notion",
      redirectUrl: "http://127.0.0.1/cb",
    });
    expect(noApp.status).toBe(400);
    expect(noApp.json.details).toContain("MEMCTX_NOTION_CLIENT_ID");
  });

  it("serves the OAuth callback without an API key and refuses an unknown state", async () => {
    // Mounted as app.ts should: before bearer auth, errors answered by the engine's one handler.
    const app = new Hono<EngineEnv>();
    app.onError(errorHandler(engine.context));
    connectorCallbackRoute(app, engine.context);
    app.use(bearerAuth(engine.context));
    const res = await app.fetch(
      new Request("http://memctx.local/connectors/oauth/callback?code=c&state=nope"),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { details: string }).details).toContain("state");
  });
});
