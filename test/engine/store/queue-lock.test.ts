/**
 * On PostgreSQL a job claim takes the schema's queue lock, not its write lock (store/db.ts
 * TransactionLock): a replica's claim must not wait while another connection holds a write
 * transaction open (an index or dream commit). Both connections live on this thread here, so a
 * claim that waited for the write lock would wait forever: the worker's lock_timeout turns that
 * into an error.
 * SQLite has one lock for every writer (a claim there waits for the file, as it must).
 */
import { describe, expect, it } from "vitest";
import { transaction } from "../../../src/engine/store/db.js";
import { claimJob, completeJob, enqueueJob } from "../../../src/engine/store/jobs.js";
import { storeConnections, TEST_BACKEND } from "../../support/harness.js";

const db = storeConnections();

describe.skipIf(TEST_BACKEND !== "postgres")("job claims on PostgreSQL (queue lock)", () => {
  it("do not wait for another connection's open write transaction", async () => {
    const writer = await db();
    const worker = await db();
    const id = await enqueueJob(writer, { kind: "k", payload: { n: 1 } });
    // The writer holds the schema's write lock until it commits.
    await transaction(writer, async () => {
      await writer.prepare("UPDATE namespaces SET updated_at = updated_at").run();
      // Answered while the write transaction is still open: had it waited for it, it would wait
      // on this very test, and its lock_timeout would fail it.
      const job = await claimJob(worker, ["k"], "W", 30_000);
      expect(job?.id).toBe(id);
      await completeJob(worker, id, "W");
    });
    // And the writer's own claims still work after it.
    expect(await claimJob(writer, ["k"], "W", 30_000)).toBeUndefined();
  });
});
