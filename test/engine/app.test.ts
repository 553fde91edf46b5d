import { afterEach, describe, expect, it } from "vitest";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { LAST_USED_RESOLUTION_MS, listKeys } from "../../src/engine/store/organizations.js";
import { TEST_BACKEND, TEST_KEY, tempDir } from "../support/harness.js";

let dir: ReturnType<typeof tempDir>;
let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close().catch(() => {});
  dir?.remove();
});

const req = (path: string, init: RequestInit = {}) =>
  new Request(`http://in-process${path}`, {
    ...init,
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...init.headers },
  });

describe("the engine's fetch handler", () => {
  it("answers an unexpected failure with 500 and a generic message, and logs the stack", async () => {
    dir = tempDir();
    const logged: string[] = [];
    engine = await openEngine({
      dataDir: dir.path,
      apiKey: TEST_KEY,
      workers: 0,
      log: (m) => logged.push(m),
    });
    // Break the store underneath the routes: every query now throws.
    await engine.context.db.exec(
      TEST_BACKEND === "postgres" ? "DROP TABLE namespaces CASCADE" : "DROP TABLE namespaces",
    );
    const res = await engine.fetch(req("/ns/x", { method: "GET" }));
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "Internal server error" });
    expect(logged.join("\n")).toMatch(/no such table: namespaces|relation "namespaces" does not exist/);
  });

  it("reports the database in /health, and 503 once it cannot be read", async () => {
    dir = tempDir();
    engine = await openEngine({ dataDir: dir.path, apiKey: TEST_KEY, workers: 0 });
    const ok = await engine.fetch(new Request("http://in-process/health"));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: "ok", database: { backend: TEST_BACKEND } });
    expect((await engine.database()).schema).toBeGreaterThan(0);
    await engine.context.db.close();
    const down = await engine.fetch(new Request("http://in-process/health"));
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({
      status: "unavailable",
      database: { backend: TEST_BACKEND, error: expect.stringMatching(/not open/) },
    });
  });

  it("serves the API in-process, without a socket", async () => {
    dir = tempDir();
    engine = await openEngine({ dataDir: dir.path, apiKey: TEST_KEY, workers: 0 });
    const add = await engine.fetch(
      req("/ns/inproc/document", { method: "POST", body: JSON.stringify({ content: "hi" }) }),
    );
    expect(add.status).toBe(200);
    expect(await add.json()).toMatchObject({ status: "queued" });
    const ns = await engine.fetch(req("/ns/inproc"));
    expect(await ns.json()).toMatchObject({ namespace: "inproc", documentCount: 1 });
  });

  it("accepts dreaming and taskType in the query or the body, the body winning", async () => {
    dir = tempDir();
    engine = await openEngine({ dataDir: dir.path, apiKey: TEST_KEY, workers: 0 });
    const add = async (query: string, body: object) =>
      (await (
        await engine!.fetch(req(`/ns/opts/document${query}`, { method: "POST", body: JSON.stringify(body) }))
      ).json()) as { id: string };
    const a = await add("?dreaming=instant&taskType=superrag", { content: "a" });
    const b = await add("?dreaming=instant", { content: "b", dreaming: "dynamic", taskType: "memory" });
    const row = async (id: string) =>
      await engine!.context.db.prepare("SELECT dreaming, task_type FROM documents WHERE id = $1").get(id);
    expect(await row(a.id)).toEqual({ dreaming: "instant", task_type: "superrag" });
    expect(await row(b.id)).toEqual({ dreaming: "dynamic", task_type: "memory" });
  });
});

describe("deleting documents", () => {
  it("deletes the memories left without a source, and keeps those another document still supports", async () => {
    dir = tempDir();
    engine = await openEngine({ dataDir: dir.path, apiKey: TEST_KEY, workers: 0 });
    const db = engine.context.db;
    const add = async (content: string) =>
      (
        (await (
          await engine!.fetch(req("/ns/m/document", { method: "POST", body: JSON.stringify({ content }) }))
        ).json()) as { id: string }
      ).id;
    const a = await add("Doc A");
    const b = await add("Doc B");
    const ns = (
      (await db.prepare("SELECT namespace_id AS id FROM documents WHERE id = $1").get(a)) as { id: string }
    ).id;
    const t = new Date().toISOString();
    const memory = async (id: string, doc: string, sources: string[]) => {
      await db
        .prepare(
          "INSERT INTO memories (id, namespace_id, memory, document_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .run(id, ns, `fact ${id}`, doc, t, t);
      for (const s of sources) {
        await db
          .prepare("INSERT INTO memory_sources (memory_id, document_id, created_at) VALUES ($1, $2, $3)")
          .run(id, s, t);
      }
    };
    await memory("mem_only_a", a, [a]);
    await memory("mem_both", b, [a, b]);
    const res = await engine.fetch(
      req("/ns/m/document", { method: "DELETE", body: JSON.stringify({ ids: [a] }) }),
    );
    expect(await res.json()).toEqual({ count: 1, errors: [] });
    const left = (await db.prepare("SELECT id FROM memories ORDER BY id").all()) as { id: string }[];
    expect(left.map((m) => m.id)).toEqual(["mem_both"]);
    // the search index followed: only the kept memory still holds the word
    expect(
      await db
        .prepare(
          `SELECT count(*) AS n FROM search_postings p JOIN search_spaces s ON s.id = p.space
           WHERE s.corpus = 'memories' AND p.term = 'fact'`,
        )
        .get(),
    ).toEqual({ n: 1 });
  });
});

describe("API keys", () => {
  it("records when a key was last used, at most once a minute, and only for that key", async () => {
    dir = tempDir();
    engine = await openEngine({ dataDir: dir.path, apiKey: TEST_KEY, workers: 0 });
    const other = await engine.createKey("other-org");
    const db = engine.context.db;
    const lastUsed = async (prefixOf: string) =>
      (await listKeys(db)).find((k) => prefixOf.startsWith(k.prefix))?.last_used_at ?? null;
    expect(await lastUsed(TEST_KEY)).toBeNull();

    expect((await engine.fetch(req("/namespaces"))).status).toBe(200);
    const first = lastUsed(TEST_KEY);
    expect(await first).not.toBeNull();
    expect(await lastUsed(other)).toBeNull();

    // Within the minute: no write.
    expect((await engine.fetch(req("/namespaces"))).status).toBe(200);
    expect(await lastUsed(TEST_KEY)).toBe(await first);

    // Older than the resolution: written again.
    const stale = new Date(Date.parse((await first)!) - LAST_USED_RESOLUTION_MS).toISOString();
    await db.prepare("UPDATE api_keys SET last_used_at = $1").run(stale);
    expect((await engine.fetch(req("/namespaces"))).status).toBe(200);
    expect(Date.parse((await lastUsed(TEST_KEY))!)).toBeGreaterThan(Date.parse(stale));
    expect(await lastUsed(other)).toBe(stale);

    // A rejected key records nothing.
    const bad = await engine.fetch(
      new Request("http://in-process/ns/x", { headers: { authorization: "Bearer mk_unknown" } }),
    );
    expect(bad.status).toBe(401);
  });
});
