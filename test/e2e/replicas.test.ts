import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";
import { until } from "../support/wait.js";

/**
 * Two `memctx serve` replicas on one PostgreSQL database (issue 12): they share the documents and
 * the job queue, and a replica killed mid-processing loses nothing it acknowledged (the other
 * claims its jobs once their lease runs out). Runs when MEMCTX_TEST_DATABASE_URL names a database.
 */
const url = process.env.MEMCTX_TEST_DATABASE_URL;

const children: ServeChild[] = [];
const dirs: ReturnType<typeof tempDir>[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map(stopChild));
  for (const d of dirs.splice(0)) d.remove();
});

describe.skipIf(!url)("two memctx serve replicas on one PostgreSQL database", () => {
  it("share documents, and a replica SIGKILLed halfway through 200 adds loses none it acknowledged", async () => {
    const u = new URL(url!);
    u.searchParams.set("schema", `replicas_${process.pid}_${Date.now()}`);
    // One database, one secret key (connector secrets are sealed with it); a short lease so that
    // the jobs the killed replica held are claimed by the other soon.
    const env = {
      MEMCTX_DATABASE_URL: u.toString(),
      MEMCTX_SECRET_KEY: "replicas-test-secret",
      MEMCTX_JOB_LEASE_MS: "1500",
    };
    const start = async () => {
      const dir = tempDir("memctx-replica-");
      dirs.push(dir);
      const child = await spawnServe(dir.path, env, ["--workers", "1"]);
      children.push(child);
      // The backend line goes to stderr before "listening on" goes to stdout, but the two pipes
      // are read apart: it can arrive just after.
      await until(
        () => child.stdout(),
        (out) => /postgres, schema \d+/.test(out),
        "the backend line",
      );
      return child;
    };
    // Started together: the schema's migration runs once, under the advisory lock.
    const [a, b] = await Promise.all([start(), start()]);
    const clientA = new MemoryClient({ baseUrl: a.url, apiKey: TEST_KEY, maxRetries: 0 });
    const clientB = new MemoryClient({ baseUrl: b.url, apiKey: TEST_KEY, maxRetries: 0 });

    const acknowledged: string[] = [];
    let killed = false;
    const add = async (i: number) => {
      const client = i % 2 === 0 && !killed ? clientA : clientB;
      try {
        const r = await client.ns("replicas").documents.add({
          content: `Replica test document ${i}: Marta ${i} keeps ${i} beehives near the river. ${"More text. ".repeat(10)}`,
          id: `r${i}`,
        });
        acknowledged.push(r.id);
      } catch {
        // in flight on the replica that died: not acknowledged, so nothing is promised
      }
      if (acknowledged.length === 100 && !killed) {
        killed = true;
        a.child.kill("SIGKILL");
      }
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 200) await add(next++);
      }),
    );
    await a.exited;
    await clientA.close();
    expect(killed).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(150);

    // Every acknowledged document reaches done (processing and dreaming) through the survivor.
    const ns = clientB.ns("replicas");
    for (const id of acknowledged) {
      const doc = await ns.documents.waitFor(id, { pollIntervalMs: 50 });
      expect(doc.system.status).toBe("done");
    }
    const stillDreaming = async () => {
      const list = await ns.documents.list({ limit: 100 });
      const pages = Math.ceil((list.pagination.totalItems ?? 0) / 100);
      let dreaming = 0;
      for (let page = 1; page <= pages; page++) {
        const p = page === 1 ? list : await ns.documents.list({ limit: 100, page });
        dreaming += p.documents.filter((d) => d.system.dreamingStatus !== "done").length;
      }
      return dreaming;
    };
    await until(stillDreaming, (n) => n === 0, "every document to be dreamed");
    const memories = await ns.memories.list({ limit: 100 });
    expect(memories.pagination.totalItems).toBeGreaterThan(0);
    // A document added through the killed replica is found through the other.
    const found = await ns.search({ query: "Marta 0 beehives", searchMode: "chunks", threshold: 0 });
    expect(JSON.stringify(found)).toContain("Replica test document 0");
    await clientB.close();
  });
});
