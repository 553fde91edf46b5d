import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { type Engine, type EngineOptions, openEngine } from "../../src/engine/index.js";
import type { Embedder } from "../../src/engine/models/embedder.js";
import type { Dreamer } from "../../src/engine/pipeline/dreamer.js";
import { getDocumentRow } from "../../src/engine/store/documents.js";
import { claimJob } from "../../src/engine/store/jobs.js";
import { MemoryDraft } from "../../src/engine/store/memory-draft.js";
import { TEST_KEY, tempDir } from "../support/harness.js";
import { until } from "../support/wait.js";

let dir: ReturnType<typeof tempDir>;
const engines: Engine[] = [];
const servers: Server[] = [];

async function engine(opts: Partial<EngineOptions> = {}) {
  const e = await openEngine({ dataDir: dir.path, apiKey: TEST_KEY, embedder: null, log: () => {}, ...opts });
  engines.push(e);
  return { e, ns: new MemoryClient({ apiKey: TEST_KEY, fetch: e.fetch, maxRetries: 0 }).ns("p") };
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  for (const s of servers.splice(0)) s.close();
  dir?.remove();
});

/** A deterministic embedder that can be held at a gate or made to fail. */
class TestEmbedder implements Embedder {
  readonly model = "test-embedder";
  readonly dimensions = 4;
  calls: string[][] = [];
  failures = 0;
  gate: Promise<void> | null = null;
  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.calls.push(texts);
    if (this.gate !== null) {
      const aborted = new Promise<void>((r) => signal?.addEventListener("abort", () => r(), { once: true }));
      await Promise.race([this.gate, aborted]);
      signal?.throwIfAborted();
    }
    if (this.failures > 0) {
      this.failures--;
      throw new Error("embedding service unavailable");
    }
    return texts.map((t) => Float32Array.from([t.length, 1, 0, 0]));
  }
}

const count = async (e: Engine, sql: string, ...args: string[]) =>
  ((await e.context.db.prepare(sql).get(...args)) as { n: number }).n;

describe("the processing pipeline", () => {
  it("stores one vector per chunk when an embedder is configured, and none without", async () => {
    dir = tempDir();
    const embedder = new TestEmbedder();
    const { e, ns } = await engine({ embedder });
    const doc = await ns.documents.add({ content: "Vectors for this text." });
    await ns.documents.waitFor(doc.id, { pollIntervalMs: 10 });
    const chunks = count(e, "SELECT count(*) AS n FROM chunks WHERE document_id = $1", doc.id);
    expect(await chunks).toBeGreaterThan(0);
    expect(await count(e, "SELECT count(*) AS n FROM chunk_vectors WHERE model = 'test-embedder'")).toBe(
      await chunks,
    );
    await e.close();

    const plain = await engine({ embedder: null });
    const d2 = await plain.ns.documents.add({ content: "No vectors here." });
    await plain.ns.documents.waitFor(d2.id, { pollIntervalMs: 10 });
    expect(
      await count(
        plain.e,
        "SELECT count(*) AS n FROM chunk_vectors v JOIN chunks c ON c.rowid = v.chunk_rowid WHERE c.document_id = $1",
        d2.id,
      ),
    ).toBe(0);
  });

  it("retries a failing stage, then marks the document failed with the message", async () => {
    dir = tempDir();
    const embedder = new TestEmbedder();
    embedder.failures = 1;
    const { e, ns } = await engine({ embedder });
    const ok = await ns.documents.add({ content: "Fails once, then works." });
    // the retry waits out a 1 s backoff
    await ns.documents.waitFor(ok.id, { pollIntervalMs: 20 });
    expect(embedder.calls.length).toBe(2);

    embedder.failures = 99;
    const bad = await ns.documents.add({ content: "Never works." });
    await e.context.db.prepare("UPDATE jobs SET max_attempts = 1 WHERE document_id = $1").run(bad.id);
    const doc = await until(
      () => ns.documents.get(bad.id),
      (d) => d.system.status === "failed",
      "the document to fail",
    );
    expect(doc.error).toBe("embedding service unavailable");
    expect(doc.system.dreamingStatus).toBe("done");
  });

  it("lets a newer upsert win over the job still working on the older content, never mixing the two", async () => {
    dir = tempDir();
    const embedder = new TestEmbedder();
    let release!: () => void;
    embedder.gate = new Promise((r) => {
      release = r;
    });
    const { e, ns } = await engine({ embedder, workers: 2 });
    const first = await ns.documents.add({ content: "Old version of the note.", id: "n" });
    await until(
      () => embedder.calls.length,
      (n) => n > 0,
      "the first job to reach the embedder",
    );
    await ns.documents.add({ content: "New version of the note.", id: "n" });
    // the second worker takes the new job and waits at the same gate; let both through
    release();
    embedder.gate = null;
    const doc = await ns.documents.waitFor(first.id, { pollIntervalMs: 10 });
    // wait for the queue to drain, so that a late stale job would have shown itself
    await until(
      () => count(e, "SELECT count(*) AS n FROM jobs"),
      (n) => n === 0,
      "the queue to drain",
    );
    const read = await ns.documents.get("n", { include: ["chunks"] });
    expect(doc.id).toBe(first.id);
    expect(read.chunks?.map((c) => c.content)).toEqual(["New version of the note."]);
    expect(
      await count(
        e,
        `SELECT (SELECT count(*) FROM search_postings WHERE term = 'old')
              + (SELECT count(*) FROM search_context_postings WHERE term = 'old') AS n`,
      ),
    ).toBe(0);
  });

  it("commits what beforeIndexed answers in the transaction that marks done, and calls dream only for documents it left", async () => {
    dir = tempDir();
    const dreamt: string[][] = [];
    const dreamer: Dreamer = {
      async beforeIndexed(doc, ctx) {
        // Takes the instant ones; the others are dream()'s.
        if (!doc.text.startsWith("Dream")) return undefined;
        // No memories, committed with the chunks: the document is dreamed when it is done.
        const row = (await getDocumentRow(ctx.db, doc.id))!;
        const draft = await MemoryDraft.begin(ctx.db, row.namespace_id);
        return { memories: { draft, applied: [], drawnChars: null, appended: false, note: null } };
      },
      async dream(ids) {
        dreamt.push(ids);
      },
    };
    const { ns } = await engine({ dreamer: () => dreamer });
    const doc = await ns.documents.add({ content: "Dream about this.", dreaming: "instant" });
    const done = await ns.documents.waitFor(doc.id, { pollIntervalMs: 5 });
    // status done and dreamingStatus done became visible together
    expect(done.system.dreamingStatus).toBe("done");
    const later = await ns.documents.add({ content: "Later, maybe." });
    await ns.documents.waitFor(later.id, { pollIntervalMs: 5 });
    // dream() runs after the commit: wait until it has seen the later one (an earlier call for the
    // instant one would have come first).
    await until(
      () => dreamt.flat(),
      (ids) => ids.includes(later.id),
      "dream() of the later document",
    );
    expect(dreamt).toEqual([[later.id]]);
  });

  it("starts processing only once there is work: a job queued here, or one another process queued", async () => {
    dir = tempDir();
    const server = await engine({ workers: 1 });
    // Past the first look at the store (2 s after open), which finds it empty: nothing loaded.
    await until(
      () => server.e.looksForWork,
      (n) => n >= 1,
      "the engine's first look for work",
    );
    expect(server.e.processingStarted).toBe(false);
    // Another process on the same store (the CLI, say) queues a document and goes.
    const cli = await openEngine({
      dataDir: dir.path,
      apiKey: TEST_KEY,
      embedder: null,
      log: () => {},
      workers: 0,
    });
    const other = new MemoryClient({ apiKey: TEST_KEY, fetch: cli.fetch, maxRetries: 0 }).ns("p");
    const doc = await other.documents.add({ content: "Queued by another process." });
    await cli.close();
    expect((await server.ns.documents.waitFor(doc.id, { pollIntervalMs: 20 })).system.status).toBe("done");
    expect(server.e.processingStarted).toBe(true);
  });

  it("starts processing at once for a document added to it", async () => {
    dir = tempDir();
    const { e, ns } = await engine({ workers: 1 });
    expect(e.processingStarted).toBe(false);
    const doc = await ns.documents.add({ content: "Process me." });
    expect(e.processingStarted).toBe(true);
    await ns.documents.waitFor(doc.id, { pollIntervalMs: 10 });
  });

  it("resumes documents left queued by a process without workers, and jobs held by a dead worker", async () => {
    dir = tempDir();
    const first = await engine({ workers: 0 });
    const a = await first.ns.documents.add({ content: "Queued while nobody worked." });
    const b = await first.ns.documents.add({ content: "Claimed by a worker that died." });
    expect((await first.ns.documents.get(a.id)).system).toMatchObject({
      status: "queued",
      dreamingStatus: "dreaming",
    });
    // a worker of a dead process claimed one job and never came back
    const held = await claimJob(first.e.context.db, ["document"], "dead-process", 200);
    expect(held).toBeDefined();
    await first.e.close();

    const second = await engine({ workers: 1, jobLeaseMs: 200 });
    for (const id of [a.id, b.id]) {
      const doc = await second.ns.documents.waitFor(id, { pollIntervalMs: 20 });
      expect(doc.system.status).toBe("done");
    }
  });

  it("gives a job in progress back on close, so the next start resumes it at once", async () => {
    dir = tempDir();
    const embedder = new TestEmbedder();
    embedder.gate = new Promise(() => {}); // never opens: the job is in flight when the engine closes
    const first = await engine({ embedder, workers: 1 });
    const doc = await first.ns.documents.add({ content: "Interrupted by a shutdown." });
    await until(
      () => embedder.calls.length,
      (n) => n > 0,
      "the job to reach the embedder",
    );
    await first.e.close();
    expect(first.e.context.db.isOpen).toBe(false);
    // a long lease: only the release makes the job claimable at once
    const second = await engine({ embedder: new TestEmbedder(), workers: 1, jobLeaseMs: 600_000 });
    const done = await second.ns.documents.waitFor(doc.id, { pollIntervalMs: 10 });
    expect(done.system.status).toBe("done");
  });

  it("fetches URL content from a private address only when allowed", async () => {
    dir = tempDir();
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><head><title>Local page</title></head><body><p>Served on loopback.</p></body></html>");
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`;
    const { ns } = await engine({ allowPrivateNetwork: true });
    const doc = await ns.documents.add({ content: url });
    const done = await ns.documents.waitFor(doc.id, { pollIntervalMs: 10 });
    expect(done.type).toBe("webpage");
    expect(done.title).toBe("Local page");
    expect(done.url).toBe(url);
    const read = await ns.documents.get(doc.id, { include: ["chunks"] });
    expect(read.chunks?.map((c) => c.content).join(" ")).toContain("Served on loopback.");
  });
});
