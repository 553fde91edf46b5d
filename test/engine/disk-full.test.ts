import { afterEach, describe, expect, it } from "vitest";
import { type Engine, openEngine } from "../../src/engine/index.js";
import type { Db } from "../../src/engine/store/db.js";
import { startTestServer, TEST_BACKEND, type TestServer, tempDir } from "../support/harness.js";
import { until } from "../support/wait.js";

/**
 * A full disk, made real by SQLite itself: `PRAGMA max_page_count` at the file's current size on
 * one connection makes every write of that connection that needs a new page fail with SQLITE_FULL,
 * exactly as a full file system does.
 */
const fill = async (db: Db) => {
  const { page_count } = (await db.prepare("PRAGMA page_count").get()) as { page_count: number };
  await db.exec(`PRAGMA max_page_count = ${page_count}`);
};
const free = (db: Db) => db.exec("PRAGMA max_page_count = 4294967294");

/** Text that needs many new pages to store and index. */
const bigText = (seed: string) =>
  Array.from({ length: 3000 }, (_, i) => `${seed} sentence ${i} about item${i} and topic${i % 97}.`).join(
    " ",
  );

let dir: ReturnType<typeof tempDir>;
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
  dir?.remove();
});

// SQLite's own full disk (max_page_count); PostgreSQL's (SQLSTATE 53100) cannot be made here.
describe.skipIf(TEST_BACKEND === "postgres")("a full disk", () => {
  it("answers 507 naming the full disk, writes nothing, and takes the same request once space is back", async () => {
    dir = tempDir("memctx-disk-full-");
    const server: TestServer = await startTestServer(dir.path, { workers: 0 });
    open.push(server);
    const db = server.engine.context.db;
    const ns = server.client().ns("full");
    await ns.documents.add({ content: "a first small document" });
    const count = async () =>
      ((await db.prepare("SELECT count(*) AS n FROM documents").get()) as { n: number }).n;

    await fill(db);
    const res = await server.call("POST", "/ns/full/document", { body: { content: bigText("full") } });
    expect(res.status).toBe(507);
    const body = (await res.json()) as { error: string; details: string };
    expect(body.error).toBe("Disk full");
    expect(body.details).toContain("disk is full");
    expect(await count()).toBe(1);

    await free(db);
    const again = await server.call("POST", "/ns/full/document", { body: { content: bigText("full") } });
    expect(again.status).toBeLessThan(300);
    expect(((await again.json()) as { status: string }).status).toBe("queued");
    expect(await count()).toBe(2);
  });

  it("keeps an acknowledged document's job waiting for space, its attempts unspent, then finishes it", async () => {
    dir = tempDir("memctx-disk-full-job-");
    // The API on one engine (no workers); the processing on another, whose connection is full.
    const api: TestServer = await startTestServer(dir.path, { workers: 0 });
    open.push(api);
    const logs: string[] = [];
    const worker: Engine = await openEngine({
      dataDir: dir.path,
      workers: 1,
      // The fault is this connection's: its jobs must run on it, not in processing threads.
      threads: false,
      embedder: null,
      diskFullRetryMs: 50,
      log: (m) => logs.push(m),
    });
    open.push(worker);
    const wdb = worker.context.db;
    await fill(wdb);

    const ns = api.client().ns("full");
    const { id, status } = await ns.documents.add({ content: bigText("queued") });
    expect(status).toBe("queued");
    const job = async () =>
      (await wdb
        .prepare("SELECT state, attempts, max_attempts, error FROM jobs WHERE document_id = $1")
        .get(id)) as
        | { state: string; attempts: number; max_attempts: number; error: string | null }
        | undefined;
    // More deferrals than the job has attempts: none of them is counted.
    await until(
      () => logs.filter((l) => l.includes("full disk")).length,
      (n) => n > 5,
    );
    const waiting = (await job())!;
    expect(waiting.error).toMatch(/^disk full: /);
    expect(waiting.attempts).toBeLessThanOrEqual(1);
    expect(waiting.state).not.toBe("failed");
    expect((await ns.documents.get(id)).system.status).not.toBe("failed");

    await free(wdb);
    await ns.documents.waitFor(id, { until: "indexed" });
    expect((await ns.documents.get(id)).system.status).toBe("done");
    expect(await job()).toBeUndefined();
  });

  it("runs the jobs a full disk stopped once there is room again, not when their wait ends", async () => {
    dir = tempDir("memctx-disk-full-resume-");
    const api: TestServer = await startTestServer(dir.path, { workers: 0 });
    open.push(api);
    const logs: string[] = [];
    const worker: Engine = await openEngine({
      dataDir: dir.path,
      workers: 1,
      threads: false,
      embedder: null,
      // Far longer than the test: only the return of room can bring the jobs back.
      diskFullRetryMs: 3_600_000,
      log: (m) => logs.push(m),
    });
    open.push(worker);
    const wdb = worker.context.db;
    await fill(wdb);
    const ns = api.client().ns("full");
    const ids = [];
    for (const seed of ["one", "two", "three"])
      ids.push((await ns.documents.add({ content: bigText(seed) })).id);
    await until(
      () => logs.filter((l) => l.includes("full disk")).length,
      (n) => n >= 1,
    );
    await free(wdb);
    for (const id of ids) await ns.documents.waitFor(id, { until: "indexed", timeoutMs: 20_000 });
    expect(logs.some((l) => /the disk has room again: \d+ job/.test(l))).toBe(true);
  });

  it("queues a failed document again when it is sent again", async () => {
    dir = tempDir("memctx-disk-full-resend-");
    const server: TestServer = await startTestServer(dir.path, { workers: 0 });
    open.push(server);
    const db = server.engine.context.db;
    const ns = server.client().ns("full");
    const content = "a document whose processing failed";
    const { id } = await ns.documents.add({ content, id: "resend-me" });
    // What the worker records after a job failed for good (e.g. after its attempts on a broken disk).
    await db.prepare("UPDATE documents SET status = 'failed', error = 'disk full' WHERE id = $1").run(id);
    await db.prepare("UPDATE jobs SET state = 'failed' WHERE document_id = $1").run(id);
    const again = await ns.documents.add({ content, id: "resend-me" });
    expect(again).toMatchObject({ id, status: "queued" });
    const jobs = await db.prepare("SELECT state FROM jobs WHERE document_id = $1").all(id);
    expect(jobs).toEqual([{ state: "queued" }]);
  });
});
