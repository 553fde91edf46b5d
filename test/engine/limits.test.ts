import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient, PaymentRequiredError, RateLimitError } from "../../src/client/index.js";
import { type RunningServer, startServer } from "../../src/engine/server.js";
import { organizationDocumentTokens } from "../../src/engine/store/namespaces.js";
import { authenticate } from "../../src/engine/store/organizations.js";
import { type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";
import { until } from "../support/wait.js";

const servers: RunningServer[] = [];
const children: ServeChild[] = [];
const dirs: ReturnType<typeof tempDir>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(children.splice(0).map(stopChild));
  for (const d of dirs.splice(0)) d.remove();
});

/** The document tokens the test key's organization holds. */
async function organizationTokens(server: RunningServer): Promise<number> {
  const db = server.engine.context.db;
  return await organizationDocumentTokens(db, (await authenticate(db, TEST_KEY))!.organization.id);
}

async function serve(
  limits: { requestsPerMinute?: number | null; documentTokenQuota?: number | null } = {},
  clock?: () => number,
) {
  const dir = tempDir();
  dirs.push(dir);
  const server = await startServer({
    dataDir: dir.path,
    port: 0,
    host: "127.0.0.1",
    apiKey: TEST_KEY,
    workers: 0,
    log: () => {},
    limits,
    ...(clock ? { clock } : {}),
  });
  servers.push(server);
  const call = (method: string, path: string, body?: unknown, key = TEST_KEY) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  return { server, call };
}

describe("per-key rate limits", () => {
  it("answers 429 with Retry-After once a key has used its requests per minute, and the refused request changes nothing", async () => {
    // The clock stands still: no token comes back during the test, however slowly it runs.
    const { server, call } = await serve({ requestsPerMinute: 3 }, () => Date.parse("2026-11-29T12:00:00Z"));
    for (let i = 0; i < 3; i++) {
      expect((await call("POST", "/ns/rl/document", { content: `note ${i}`, id: `n${i}` })).status).toBe(200);
    }
    const refused = await call("POST", "/ns/rl/document", { content: "one too many", id: "n3" });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    // A token comes back every 20 s at 3 per minute.
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(20);
    expect(await refused.json()).toEqual({
      error: "Rate limit exceeded",
      details: expect.stringMatching(/3 requests per minute; try again in \d+ s/),
    });
    // Another key has its own allowance: it sees the three documents, not the refused fourth.
    const other = await server.engine.createKey();
    const list = await call("POST", "/ns/rl/list/documents?limit=100", {}, other);
    expect(list.status).toBe(200);
    const ids = ((await list.json()) as { documents: { customId: string }[] }).documents.map(
      (d) => d.customId,
    );
    expect(ids.sort()).toEqual(["n0", "n1", "n2"]);
    // Health and the OpenAPI document are not counted.
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it("the client waits as Retry-After says and gets through", async () => {
    // The server's clock stands still while the key spends its minute, so the burst empties the
    // bucket however slowly the machine runs; it moves on by what a 429 told the client to wait.
    let now = Date.parse("2026-11-29T12:00:00Z");
    const { server } = await serve({ requestsPerMinute: 60 }, () => now);
    const answers: number[] = [];
    // The client's requests go over HTTP to the server, through a hook that sees each answer.
    const overHttp = async (req: Request) => {
      const url = new URL(req.url);
      const res = await fetch(`${server.url}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        ...(req.method === "GET" ? {} : { body: await req.text() }),
      });
      answers.push(res.status);
      if (res.status === 429) now += Number(res.headers.get("retry-after")) * 1000;
      return res;
    };
    const strict = new MemoryClient({ apiKey: TEST_KEY, fetch: overHttp, maxRetries: 0 });
    const client = new MemoryClient({ apiKey: TEST_KEY, fetch: overHttp, maxRetries: 3 });
    try {
      // Any answer spends a request (the namespace does not exist: 404).
      for (let i = 0; i < 60; i++)
        await strict
          .ns("rl")
          .get()
          .catch(() => {});
      expect(answers).toEqual(Array(60).fill(404));
      await expect(strict.ns("rl").get()).rejects.toBeInstanceOf(RateLimitError);
      answers.length = 0;
      now -= 1000; // the refusal above moved the clock; this add meets an empty bucket again
      const started = Date.now();
      await client.ns("rl").documents.add({ content: "after the burst", id: "late" });
      // One refusal (Retry-After: 1), the wait it asked for, then the add.
      expect(answers).toEqual([429, 200]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    } finally {
      await strict.close();
      await client.close();
    }
  });

  it("is off by default in the embedded engine", async () => {
    const { call } = await serve();
    const statuses = await Promise.all(Array.from({ length: 200 }, () => call("GET", "/namespaces")));
    expect(new Set(statuses.map((r) => r.status))).toEqual(new Set([200]));
  });

  it("memctx serve takes --rate-limit, else MEMCTX_RATE_LIMIT, and refuses a bad value", async () => {
    const dir = tempDir();
    dirs.push(dir);
    for (const [env, args] of [
      [{}, ["--rate-limit", "2"]],
      [{ MEMCTX_RATE_LIMIT: "2" }, []],
    ] as [Record<string, string>, string[]][]) {
      const s = await spawnServe(dir.path, { ...env, MEMCTX_THREADS: "0" }, ["--workers", "0", ...args]);
      children.push(s);
      expect(s.stdout()).toContain("limits: 2 requests per minute per key");
      const get = () => fetch(`${s.url}/namespaces`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect((await get()).status).toBe(200);
      expect((await get()).status).toBe(200);
      const third = await get();
      expect(third.status).toBe(429);
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
      await stopChild(s);
    }
    const bad = await spawnServe(dir.path, {}, ["--rate-limit", "fast"]).catch((e: Error) => e.message);
    expect(bad).toContain("--rate-limit must be a whole number");
  });
});

describe("per-organization document token quota", () => {
  it("answers 402 on a batch add that would pass the quota, and adds nothing of it", async () => {
    // 100 tokens: 400 characters of content.
    const { server, call } = await serve({ documentTokenQuota: 100 });
    expect((await call("POST", "/ns/q/document", { content: "a".repeat(300), id: "first" })).status).toBe(
      200,
    );
    const batch = await call("POST", "/v3/documents/batch", {
      containerTag: "q2",
      documents: [
        { content: "b".repeat(60), customId: "b1" },
        { content: "c".repeat(60), customId: "c1" },
      ],
    });
    expect(batch.status).toBe(402);
    expect(await batch.json()).toEqual({
      error: "Document token limit reached",
      details: expect.stringContaining("holds 75 of its 100 document tokens and this request needs 30 more"),
    });
    // Nothing of it: not the first item, not even its namespace.
    const names = (await (await call("GET", "/namespaces")).json()) as {
      namespaces: { namespace: string }[];
    };
    expect(names.namespaces.map((n) => n.namespace)).toEqual(["q"]);
    expect(await organizationTokens(server)).toBe(75);

    // A batch that fits goes through.
    const fits = await call("POST", "/v3/documents/batch", {
      containerTag: "q2",
      documents: [{ content: "b".repeat(60), customId: "b1" }],
    });
    expect(fits.status).toBe(200);
    expect(await organizationTokens(server)).toBe(90);
  });

  it("counts single adds, appends, replacements and deletes; a shorter replacement is allowed at the limit", async () => {
    const { server, call } = await serve({ documentTokenQuota: 100 });
    const client = new MemoryClient({ baseUrl: server.url, apiKey: TEST_KEY, maxRetries: 0 });
    const tokens = () => organizationTokens(server);
    try {
      await client.ns("q").documents.add({ content: "x".repeat(396), id: "big" }); // 99 tokens
      expect(await tokens()).toBe(99);
      await expect(
        client.ns("q").documents.add({ content: "y".repeat(8), id: "small" }),
      ).rejects.toBeInstanceOf(PaymentRequiredError);
      const append = await call("POST", "/ns/q/document", { content: "more turns", id: "big", append: true });
      expect(append.status).toBe(402);
      expect(await tokens()).toBe(99);
      expect((await client.ns("q").documents.get("big")).content).toBe("x".repeat(396));
      // Replaced by something shorter: fewer tokens, allowed.
      await client.ns("q").documents.add({ content: "x".repeat(200), id: "big" });
      expect(await tokens()).toBe(50);
      await client.ns("q").documents.add({ content: "y".repeat(8), id: "small" });
      expect(await tokens()).toBe(52);
      await client.ns("q").documents.delete(["big"]);
      expect(await tokens()).toBe(2);
      // A deleted namespace takes its tokens with it.
      await client.ns("q").delete();
      await until(tokens, (n) => n === 0, "the namespace's tokens to be gone");
    } finally {
      await client.close();
    }
  });

  it("holds the legacy v3 document and v4 conversation adds to it too", async () => {
    const { server, call } = await serve({ documentTokenQuota: 10 });
    const doc = await call("POST", "/v3/documents", { content: "d".repeat(44), containerTag: "legacy" });
    expect(doc.status).toBe(402);
    const conversation = await call("POST", "/v4/conversations", {
      conversationId: "c1",
      containerTags: ["legacy"],
      messages: [{ role: "user", content: "e".repeat(44) }],
    });
    expect(conversation.status).toBe(402);
    expect(await organizationTokens(server)).toBe(0);
    const fits = await call("POST", "/v3/documents", { content: "d".repeat(20), containerTag: "legacy" });
    expect(fits.status).toBe(200);
    expect(await organizationTokens(server)).toBe(5);
  });

  it("has no quota by default", async () => {
    const { call } = await serve();
    const big = await call("POST", "/ns/q/document", { content: "z".repeat(100_000), id: "big" });
    expect(big.status).toBe(200);
  });
});
