/**
 * Security review: key revocation survives a restart, and a job that kills its worker every time
 * is given up rather than claimed again forever.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { noDreaming } from "../../src/engine/pipeline/dreamer.js";
import { claimJob } from "../../src/engine/store/jobs.js";
import { createKey, LOCAL_ORGANIZATION, revokeKey } from "../../src/engine/store/organizations.js";
import { TEST_KEY, tempDir } from "../support/harness.js";
import { until } from "../support/wait.js";

let dir: ReturnType<typeof tempDir> | undefined;
const engines: Engine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close().catch(() => {});
  dir?.remove();
  dir = undefined;
});

async function open(opts: { apiKey?: string; workers?: number; jobLeaseMs?: number } = {}) {
  const e = await openEngine({
    dataDir: dir!.path,
    workers: 0,
    embedder: null,
    dreamer: noDreaming,
    log: () => {},
    ...opts,
  });
  engines.push(e);
  return e;
}

const status = (e: Engine, key: string) =>
  e
    .fetch(new Request("http://memctx.local/namespaces", { headers: { authorization: `Bearer ${key}` } }))
    .then((r) => r.status);

describe("API keys", () => {
  it("stay revoked when the engine is opened again with the same key (MEMCTX_API_KEY)", async () => {
    dir = tempDir("memctx-review-");
    const first = await open({ apiKey: TEST_KEY });
    expect(await status(first, TEST_KEY)).toBe(200);
    await revokeKey(first.context.db, TEST_KEY);
    expect(await status(first, TEST_KEY)).toBe(401);
    await first.close();

    const second = await open({ apiKey: TEST_KEY });
    expect(await status(second, TEST_KEY)).toBe(401);
  });

  it("keep their namespace restriction when the engine is opened with them", async () => {
    dir = tempDir("memctx-review-");
    const first = await open();
    const restricted = await createKey(first.context.db, LOCAL_ORGANIZATION, ["alice"]);
    await first.close();

    const second = await open({ apiKey: restricted });
    const res = await second.fetch(
      new Request("http://memctx.local/ns/bob", { headers: { authorization: `Bearer ${restricted}` } }),
    );
    expect(res.status).toBe(403);
  });
});

describe("the job queue", () => {
  it("gives up a job whose worker died during every attempt, and marks its document failed", async () => {
    dir = tempDir("memctx-review-");
    const first = await open({ apiKey: TEST_KEY });
    const add = await first.fetch(
      new Request("http://memctx.local/ns/poison/document", {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ content: "A document whose processing kills the process." }),
      }),
    );
    const { id } = (await add.json()) as { id: string };
    // Three processes claimed it in turn and died (crash, OOM kill) without releasing it.
    const db = first.context.db;
    for (let i = 0; i < 3; i++) {
      // Each lease (1 ms) must have run out before the next process can claim it.
      const held = await until(
        () => claimJob(db, ["document"], `dead-process-${i}`, 1),
        (job) => job !== undefined,
        "the lease to run out",
      );
      expect(held?.document_id).toBe(id);
    }
    await first.close();

    const second = await open({ apiKey: TEST_KEY, workers: 1, jobLeaseMs: 1 });
    const row = async () =>
      (await second.context.db.prepare("SELECT status, error FROM documents WHERE id = $1").get(id)) as {
        status: string;
        error: string | null;
      };
    await until(row, (r) => ["done", "failed"].includes(r.status), "the document to end");
    expect((await row()).status).toBe("failed");
    expect((await row()).error).toMatch(/attempt/);
    const jobs = await second.context.db.prepare("SELECT state FROM jobs WHERE document_id = $1").all(id);
    expect(jobs).toEqual([{ state: "failed" }]);
  });
});
