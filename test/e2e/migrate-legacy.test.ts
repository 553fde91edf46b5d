import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, startTestServer, type TestServer, tempDir } from "../support/harness.js";

/**
 * A v3/v4-era service as the hosted one publishes it, as far as a migration reads it:
 * `POST /v3/documents/list` `{containerTags?, includeContent, limit, page, sort, order}` ->
 * `{memories, pagination: {currentPage, limit, totalItems, totalPages}}`, and `GET /v3/documents/{id}`.
 * It leaves out the content of documents whose content is long, as a list may.
 */
interface LegacyDoc {
  id: string;
  customId?: string | null;
  content: string;
  metadata: Record<string, unknown> | null;
  containerTags: string[];
  createdAt: string;
  status: string;
}

const LONG = 200;

function legacyServer(docs: LegacyDoc[], key: string) {
  const requests: { method: string; path: string; body: unknown }[] = [];
  const body = async (req: IncomingMessage) => {
    let s = "";
    for await (const chunk of req) s += chunk;
    return s ? JSON.parse(s) : undefined;
  };
  const server: Server = createServer(async (req, res) => {
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const b = await body(req);
    requests.push({ method: req.method!, path: req.url!, body: b });
    if (req.headers.authorization !== `Bearer ${key}`) return json(401, { error: "Unauthorized" });
    if (req.method === "POST" && req.url === "/v3/documents/list") {
      const {
        containerTags,
        limit = 10,
        page = 1,
        includeContent,
      } = b as {
        containerTags?: string[];
        limit?: number;
        page?: number;
        includeContent?: boolean;
      };
      const matching = docs.filter(
        (d) => !containerTags || containerTags.some((t) => d.containerTags.includes(t)),
      );
      const slice = matching.slice((page - 1) * limit, page * limit).map((d) => {
        const { content, ...rest } = d;
        return includeContent && content.length < LONG ? { ...rest, content } : rest;
      });
      return json(200, {
        memories: slice,
        pagination: {
          currentPage: page,
          limit,
          totalItems: matching.length,
          totalPages: Math.ceil(matching.length / limit),
        },
      });
    }
    const get = /^\/v3\/documents\/([^/]+)$/.exec(req.url ?? "");
    if (req.method === "GET" && get) {
      const d = docs.find((x) => x.id === decodeURIComponent(get[1]!));
      return d ? json(200, d) : json(404, { error: "Document not found" });
    }
    return json(404, { error: "Not found" });
  });
  return {
    requests,
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, "127.0.0.1", () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function runMigrate(args: string[], env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "migrate", ...args],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stderr })),
  );
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

describe("memctx migrate from a v3/v4-era service", () => {
  it("reads documents through /v3/documents/list and /v3/documents/{id} into an embedded engine's data directory", async () => {
    const docs: LegacyDoc[] = [];
    for (let i = 0; i < 130; i++) {
      docs.push({
        id: `svc_${i}`,
        customId: i % 2 === 0 ? `legacy-${i}` : null,
        content:
          i % 10 === 0 ? `Long note ${i}. ${"The river runs. ".repeat(20)}` : `Short note ${i} about otters.`,
        metadata: { source: "v3", n: i },
        containerTags: [i < 100 ? "team_a" : "team-b"],
        createdAt: new Date(Date.UTC(2024, 0, 1 + (i % 28))).toISOString(),
        status: "done",
      });
    }
    // Nested metadata cannot be v5 metadata: that one document is named, the rest go on.
    docs.push({
      id: "svc_nested",
      content: "Nested metadata note.",
      metadata: { deep: { a: 1 } },
      containerTags: ["team-b"],
      createdAt: "2024-02-01T00:00:00.000Z",
      status: "done",
    });
    const legacy = legacyServer(docs, "legacy-key-123");
    const url = await legacy.start();
    cleanup.push(() => legacy.close());
    const data = tempDir("memctx-migrate-legacy-");
    cleanup.push(() => data.remove());

    const env = { MEMCTX_MIGRATE_FROM_KEY: "legacy-key-123" };
    const run = await runMigrate(["--from", url, "--from-api", "v3", "--to", data.path], env);
    expect(run.code, run.stderr).toBe(1); // one document failed
    expect(run.stderr).toContain("team-b/svc_nested not copied: its metadata is not flat");
    expect(run.stderr).toContain("done: 2 namespaces, copied 130, skipped 0 (already there), failed 1");
    expect(run.stderr).toContain("queued in");
    // The long ones came through GET /v3/documents/{id}.
    expect(legacy.requests.filter((r) => r.method === "GET")).toHaveLength(13);
    expect(legacy.requests.find((r) => r.path === "/v3/documents/list")?.body).toMatchObject({
      includeContent: true,
      sort: "createdAt",
      order: "asc",
    });

    // The embedded engine opened on that directory serves what arrived.
    let server: TestServer | undefined = await startTestServer(data.path, { workers: 0 });
    cleanup.push(() => server?.close());
    const client = server.client();
    const a = await client.ns("team_a").documents.list({ limit: 100 });
    expect(a.pagination.totalItems).toBe(100);
    const ten = await client.ns("team_a").documents.get("legacy-10");
    expect(ten.content).toBe(docs[10]!.content);
    expect(ten.metadata).toEqual({ source: "v3", n: 10 });
    expect(ten.date).toBe(docs[10]!.createdAt);
    expect((await client.ns("team_a").documents.get("svc_11")).content).toBe(docs[11]!.content);
    expect((await client.ns("team-b").documents.list({ limit: 100 })).pagination.totalItems).toBe(30);
    await server.close();
    server = undefined;

    // Again, for one namespace: everything is there already.
    const again = await runMigrate(
      ["--from", url, "--from-api", "v3", "--to", data.path, "--namespace", "team_a"],
      env,
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("done: 1 namespace, copied 0, skipped 100 (already there), failed 0");
  });

  it("reads from memctx's own legacy routes: what POST /v3/documents stored arrives with its ids and metadata", async () => {
    const sourceDir = tempDir("memctx-migrate-own-v3-");
    cleanup.push(() => sourceDir.remove());
    const source = await startTestServer(sourceDir.path, { workers: 0 });
    cleanup.push(() => source.close());
    for (let i = 1; i <= 3; i++) {
      const add = await source.call("POST", "/v3/documents", {
        body: {
          content: `Note ${i}: Ana moved to Porto.`,
          containerTag: "work",
          customId: `n${i}`,
          metadata: { k: i },
        },
      });
      expect(add.status).toBe(200);
    }
    const target = tempDir("memctx-migrate-own-v3-target-");
    cleanup.push(() => target.remove());
    const env = { MEMCTX_MIGRATE_FROM_KEY: source.key };
    const args = ["--from", source.url, "--from-api", "v3", "--to", target.path];
    const run = await runMigrate(args, env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("done: 1 namespace, copied 3, skipped 0 (already there), failed 0");
    const again = await runMigrate(args, env);
    expect(again.stderr).toContain("copied 0, skipped 3 (already there), failed 0");

    const server = await startTestServer(target.path, { workers: 0 });
    cleanup.push(() => server.close());
    const doc = await server.client().ns("work").documents.get("n2");
    expect(doc.content).toBe("Note 2: Ana moved to Porto.");
    expect(doc.metadata).toEqual({ k: 2 });
  });

  it("stops at the target's document token limit (402), and a later run goes on from there", async () => {
    const docs: LegacyDoc[] = Array.from({ length: 20 }, (_, i) => ({
      id: `q${i}`,
      content: `${String(i).padStart(2, "0")} ${"w".repeat(97)}`, // 100 characters: 25 tokens
      metadata: null,
      containerTags: ["quota"],
      createdAt: "2024-01-01T00:00:00Z",
      status: "done",
    }));
    const legacy = legacyServer(docs, "legacy-key-123");
    const url = await legacy.start();
    cleanup.push(() => legacy.close());
    const data = tempDir("memctx-migrate-quota-");
    cleanup.push(() => data.remove());
    const { startServer } = await import("../../src/engine/server.js");
    const open = (quota: number | null) =>
      startServer({
        dataDir: data.path,
        port: 0,
        host: "127.0.0.1",
        apiKey: "mk_target_key_123",
        workers: 0,
        log: () => {},
        limits: { documentTokenQuota: quota },
      });
    const env = { MEMCTX_MIGRATE_FROM_KEY: "legacy-key-123", MEMCTX_MIGRATE_TO_KEY: "mk_target_key_123" };
    const args = (to: string) => ["--from", url, "--from-api", "v3", "--to", to, "--concurrency", "1"];

    const tight = await open(110); // room for four
    const first = await runMigrate(args(tight.url), env);
    await tight.close();
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toContain("stopped: the target answered 402");
    expect(first.stderr).toContain("copied 4, skipped 0 (already there), failed 1");

    const roomy = await open(null);
    cleanup.push(() => roomy.close());
    const second = await runMigrate(args(roomy.url), env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain("done: 1 namespace, copied 16, skipped 4 (already there), failed 0");
  });

  it("a dry run into a directory that does not exist creates nothing", async () => {
    const legacy = legacyServer(
      [
        {
          id: "x",
          content: "One.",
          metadata: null,
          containerTags: ["t"],
          createdAt: "2024-01-01T00:00:00Z",
          status: "done",
        },
      ],
      "legacy-key-123",
    );
    const url = await legacy.start();
    cleanup.push(() => legacy.close());
    const parent = tempDir("memctx-migrate-dry-");
    cleanup.push(() => parent.remove());
    const target = join(parent.path, "not-yet");
    const run = await runMigrate(["--from", url, "--from-api", "v3", "--to", target, "--dry-run"], {
      MEMCTX_MIGRATE_FROM_KEY: "legacy-key-123",
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("would copy: 1 namespace, to copy 1, skipped 0 (already there), failed 0");
    const { existsSync } = await import("node:fs");
    expect(existsSync(target)).toBe(false);
  });
});
