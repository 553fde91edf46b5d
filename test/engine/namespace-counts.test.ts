import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { DATABASE_FILE, type Db, openDatabase, sha256 } from "../../src/engine/store/db.js";
import { createKey, listKeys, registerKey } from "../../src/engine/store/organizations.js";
import { migrations } from "../../src/engine/store/schema.js";
import { TEST_BACKEND, TEST_KEY, tempDir, testDatabase } from "../support/harness.js";

let dir: ReturnType<typeof tempDir>;
let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
  dir?.remove();
});

const open = async (workers = 1) => {
  engine = await openEngine({ dataDir: dir.path, apiKey: TEST_KEY, workers, embedder: null, log: () => {} });
  return engine;
};

async function call(e: Engine, method: string, path: string, opts: { body?: unknown; key?: string } = {}) {
  const res = await e.fetch(
    new Request(`http://memctx.local${path}`, {
      method,
      headers: { authorization: `Bearer ${opts.key ?? TEST_KEY}`, "content-type": "application/json" },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    }),
  );
  // biome-ignore lint/suspicious/noExplicitAny: read field by field
  return { status: res.status, json: (await res.json()) as any };
}

/** The counts as a scan finds them, the way GET /namespaces used to compute them per call. */
async function scanned(db: Db): Promise<Record<string, { documentCount: number; memoryCount: number }>> {
  const rows = (await db
    .prepare(
      `SELECT n.name,
         (SELECT count(*) FROM documents d WHERE d.namespace_id = n.id) AS "documentCount",
         (SELECT count(*) FROM memories m WHERE m.namespace_id = n.id AND m.is_latest = 1 AND m.is_forgotten = 0
            AND (m.forget_after IS NULL OR m.forget_after > $1)) AS "memoryCount"
       FROM namespaces n ORDER BY n.name`,
    )
    .all(new Date().toISOString())) as { name: string; documentCount: number; memoryCount: number }[];
  return Object.fromEntries(
    rows.map((r) => [r.name, { documentCount: r.documentCount, memoryCount: r.memoryCount }]),
  );
}

async function listed(e: Engine) {
  const { status, json } = await call(e, "GET", "/namespaces?limit=100");
  expect(status).toBe(200);
  return Object.fromEntries(
    (json.namespaces as { namespace: string; documentCount: number; memoryCount: number }[]).map((n) => [
      n.namespace,
      { documentCount: n.documentCount, memoryCount: n.memoryCount },
    ]),
  );
}

const itSqlite = it.skipIf(TEST_BACKEND === "postgres");

describe("namespace counters", () => {
  it("match a scan through adds, upserts, deletes, forgetting, moves and namespace deletion", async () => {
    dir = tempDir("memctx-ns-counts-");
    const e = await open();
    const db = e.context.db;
    const client = new MemoryClient({ apiKey: TEST_KEY, fetch: e.fetch, maxRetries: 0 });
    const facts = [
      "Alice lives in Paris. Alice works as a nurse.",
      "Bob plays the guitar. Bob has a dog named Rex.",
      "Carol moved to Berlin in 2021. Carol likes hiking.",
    ];
    for (const [i, content] of facts.entries()) {
      const d = await client
        .ns(i < 2 ? "a" : "b")
        .documents.add({ content, id: `doc-${i}`, dreaming: "instant" });
      await client.ns(i < 2 ? "a" : "b").documents.waitFor(d.id, { until: "memories" });
    }
    const check = async () => expect(await listed(e)).toEqual(await scanned(db));
    expect((await scanned(db)).a!.memoryCount).toBeGreaterThan(0);
    await check();

    // An upsert replaces content (and so memories) without adding a document.
    const up = await client
      .ns("a")
      .documents.add({ content: "Alice lives in Rome now.", id: "doc-0", dreaming: "instant" });
    await client.ns("a").documents.waitFor(up.id, { until: "memories" });
    await check();

    const mem = (await db
      .prepare(
        "SELECT m.id FROM memories m JOIN namespaces n ON n.id = m.namespace_id WHERE n.name = 'a' AND m.is_latest = 1 LIMIT 1",
      )
      .get()) as { id: string };
    expect((await call(e, "DELETE", "/ns/a/memories", { body: { ids: [mem.id] } })).status).toBe(200);
    await check();

    // A memory past its forget_after leaves the count without a write.
    await db
      .prepare(
        "UPDATE memories SET forget_after = '2000-01-01T00:00:00.000Z' WHERE id = (SELECT id FROM memories WHERE is_latest = 1 AND is_forgotten = 0 LIMIT 1)",
      )
      .run();
    await check();

    expect((await call(e, "DELETE", "/ns/a/document", { body: { ids: ["doc-1"] } })).status).toBe(200);
    await check();

    expect((await call(e, "DELETE", "/ns/b?moveTo=a")).status).toBe(202);
    await check();
    expect(Object.keys(await listed(e))).toEqual(["a"]);

    await client.ns("c").documents.add({ content: "one more" });
    expect((await call(e, "DELETE", "/ns/a")).status).toBe(202);
    await check();
  });

  it("are what GET /namespaces reads: no scan per call", async () => {
    dir = tempDir("memctx-ns-counts-read-");
    const e = await open(0);
    await call(e, "POST", "/ns/a/document", { body: { content: "x" } });
    await e.context.db.prepare("UPDATE namespaces SET document_count = 41, memory_count = 7").run();
    expect(await listed(e)).toEqual({ a: { documentCount: 41, memoryCount: 7 } });
  });

  // SQLite's migration 3 (PostgreSQL's schema starts with the counters).
  itSqlite("are filled in by the migration for a database written before them", async () => {
    dir = tempDir("memctx-ns-counts-migrate-");
    const old = new DatabaseSync(`${dir.path}/${DATABASE_FILE}`);
    old.exec(migrations[0]!);
    old.exec("PRAGMA user_version = 1");
    const t = new Date().toISOString();
    old.exec(
      `INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org_1', 'local', '${t}', '${t}')`,
    );
    old.exec(
      `INSERT INTO namespaces (id, organization_id, name, created_at, updated_at) VALUES ('ns_1', 'org_1', 'old', '${t}', '${t}')`,
    );
    for (let i = 0; i < 3; i++) {
      old.exec(
        `INSERT INTO documents (id, namespace_id, content, content_hash, status, dreaming_status, created_at, updated_at)
         VALUES ('doc_${i}', 'ns_1', 'c${i}', 'h${i}', 'done', 'done', '${t}', '${t}')`,
      );
      old.exec(
        `INSERT INTO memories (id, namespace_id, memory, is_latest, created_at, updated_at)
         VALUES ('mem_${i}', 'ns_1', 'm${i}', ${i < 2 ? 1 : 0}, '${t}', '${t}')`,
      );
    }
    old.close();
    const db = await openDatabase(dir.path, testDatabase());
    try {
      expect(await db.prepare("SELECT document_count, memory_count FROM namespaces").get()).toEqual({
        document_count: 3,
        memory_count: 2,
      });
    } finally {
      await db.close();
    }
  });
});

describe("keys and the organization", () => {
  it("never stores a whole key as its prefix, and cuts down the prefixes older versions stored whole", async () => {
    dir = tempDir("memctx-key-prefix-");
    const db = await openDatabase(dir.path, testDatabase());
    await registerKey(db, "shortkey", "local");
    const generated = await createKey(db, "local");
    // An older version's row: the 11-character key stored whole as its prefix.
    await registerKey(db, "elevenchars", "local");
    const legacy = await db
      .prepare("UPDATE api_keys SET prefix = 'elevenchars' WHERE key_hash = $1")
      .run(sha256("elevenchars"));
    expect(legacy.changes).toBe(1);
    await db.close();

    const e = await open(0);
    const prefixes = (await listKeys(e.context.db)).map((k) => k.prefix);
    expect(prefixes).toContain(generated.slice(0, 11));
    for (const key of ["shortkey", "elevenchars"]) {
      const p = prefixes.find((x) => key.startsWith(x));
      expect(p, key).toBeDefined();
      expect(p!.length).toBeLessThanOrEqual(Math.floor(key.length / 3));
    }
  });

  it("tells a namespace-restricted key only how many of its own namespaces exist", async () => {
    dir = tempDir("memctx-org-count-");
    const e = await open(0);
    for (const ns of ["a", "b", "c", "secret-project"]) {
      await call(e, "POST", `/ns/${ns}/document`, { body: { content: `in ${ns}` } });
    }
    expect((await call(e, "GET", "/organization")).json.namespaceCount).toBe(4);
    const restricted = await createKey(e.context.db, "local", ["a", "missing"]);
    const res = await call(e, "GET", "/organization", { key: restricted });
    expect(res.status).toBe(200);
    expect(res.json.namespaceCount).toBe(1);
  });
});
