import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";

const children: ServeChild[] = [];
let dir: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await Promise.all(children.splice(0).map(stopChild));
  dir?.remove();
});

describe("memctx serve killed mid-processing", () => {
  it("brings every acknowledged document to done after a restart on the same data directory", async () => {
    dir = tempDir();
    // A short lease so that the job the killed process held is claimed again quickly.
    const env = { MEMCTX_JOB_LEASE_MS: "1500" };
    const first = await spawnServe(dir.path, env, ["--workers", "1"]);
    children.push(first);
    const client = new MemoryClient({ baseUrl: first.url, apiKey: TEST_KEY, maxRetries: 0 });
    const ns = client.ns("crash");

    const acknowledged: string[] = [];
    let killed = false;
    const add = async (i: number) => {
      try {
        const r = await ns.documents.add({
          content: `Crash test document number ${i}. ${"Some text. ".repeat(20)}`,
          id: `c${i}`,
        });
        acknowledged.push(r.id);
      } catch {
        // in flight when the process died: not acknowledged, so nothing is promised
      }
      if (acknowledged.length === 100 && !killed) {
        killed = true;
        first.child.kill("SIGKILL");
      }
    };
    // 200 adds, 8 at a time; the process dies after the 100th acknowledgement.
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 200) await add(next++);
      }),
    );
    await first.exited;
    await client.close();
    expect(killed).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(100);

    // What the killed process left: documents not yet done, and perhaps a job it held.
    const db = new DatabaseSync(join(dir.path, "memctx.db"));
    const pending = (await db
      .prepare("SELECT count(*) AS n FROM documents WHERE status != 'done'")
      .get()) as {
      n: number;
    };
    const held = (await db.prepare("SELECT count(*) AS n FROM jobs WHERE state = 'running'").get()) as {
      n: number;
    };
    db.close();
    console.log(
      `at the kill: ${acknowledged.length} acknowledged, ${pending.n} not done, ${held.n} jobs held`,
    );
    expect(pending.n).toBeGreaterThan(0);

    const second = await spawnServe(dir.path, env);
    children.push(second);
    const again = new MemoryClient({ baseUrl: second.url, apiKey: TEST_KEY, maxRetries: 0 });
    try {
      for (const id of acknowledged) {
        const doc = await again
          .ns("crash")
          .documents.waitFor(id, { until: "memories", maxPollIntervalMs: 200 });
        expect(doc.system.status).toBe("done");
        expect(doc.system.dreamingStatus).toBe("done");
      }
      const listed = await again.ns("crash").documents.list({ limit: 100 });
      expect(listed.pagination.totalItems).toBeGreaterThanOrEqual(acknowledged.length);
    } finally {
      await again.close();
    }
  });
});
