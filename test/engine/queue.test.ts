import { describe, expect, it } from "vitest";
import {
  claimJob,
  completeJob,
  enqueueJob,
  failJob,
  jobCounts,
  renewLease,
} from "../../src/engine/store/jobs.js";
import { ensureNamespace } from "../../src/engine/store/namespaces.js";
import { ensureOrganization } from "../../src/engine/store/organizations.js";
import { storeConnections } from "../support/harness.js";

const db = storeConnections();

describe("the durable job queue", () => {
  it("gives each job to exactly one of two connections claiming at once", async () => {
    const a = await db();
    const b = await db();
    for (let i = 0; i < 50; i++) await enqueueJob(a, { kind: "k", payload: { i } });
    const seen = new Set<number>();
    for (;;) {
      const ja = await claimJob(a, ["k"], "A", 30_000);
      const jb = await claimJob(b, ["k"], "B", 30_000);
      if (!ja && !jb) break;
      for (const j of [ja, jb]) {
        if (!j) continue;
        expect(seen.has(j.id)).toBe(false);
        seen.add(j.id);
      }
    }
    expect(seen.size).toBe(50);
  });

  it("claims only the kinds asked for, oldest first", async () => {
    const a = await db();
    const first = await enqueueJob(a, { kind: "x" });
    await enqueueJob(a, { kind: "y" });
    await enqueueJob(a, { kind: "x" });
    expect((await claimJob(a, ["x"], "A", 30_000))?.id).toBe(first);
    expect((await claimJob(a, ["y"], "A", 30_000))?.kind).toBe("y");
    expect(await claimJob(a, ["y"], "A", 30_000)).toBeUndefined();
  });

  it("starts a one-per-namespace kind only while no job of its kind and namespace runs", async () => {
    const a = await db();
    const b = await db();
    const org = await ensureOrganization(a, "org");
    const n1 = (await ensureNamespace(a, org.id, "one")).id;
    const n2 = (await ensureNamespace(a, org.id, "two")).id;
    await enqueueJob(a, { kind: "dream", namespaceId: n1 });
    await enqueueJob(a, { kind: "dream", namespaceId: n1 });
    await enqueueJob(a, { kind: "dream", namespaceId: n2 });
    const serial = ["dream"];
    const first = (await claimJob(a, ["dream"], "A", 30_000, serial))!;
    expect(first.namespace_id).toBe(n1);
    // The other process skips the namespace that is dreaming, and takes the next one's job.
    const second = (await claimJob(b, ["dream"], "B", 30_000, serial))!;
    expect(second.namespace_id).toBe(n2);
    expect(await claimJob(b, ["dream"], "B", 30_000, serial)).toBeUndefined();
    // Without the rule, the same kind of job of one namespace runs twice at once.
    expect((await claimJob(b, ["dream"], "B", 30_000))?.namespace_id).toBe(n1);
  });

  it("lets a one-per-namespace job start once the running one is done, or its lease ran out", async () => {
    const a = await db();
    const ns = (await ensureNamespace(a, (await ensureOrganization(a, "org")).id, "one")).id;
    for (let i = 0; i < 3; i++) await enqueueJob(a, { kind: "dream", namespaceId: ns });
    const serial = ["dream"];
    const first = (await claimJob(a, ["dream"], "A", 30_000, serial))!;
    expect(await claimJob(a, ["dream"], "B", 30_000, serial)).toBeUndefined();
    await completeJob(a, first.id, "A");
    const second = (await claimJob(a, ["dream"], "B", 1, serial))!;
    expect(second.id).toBeGreaterThan(first.id);
    // B died: its lease (1 ms) runs out, and its namespace is free again.
    const t = Date.now();
    while (Date.now() - t < 5);
    const third = (await claimJob(a, ["dream"], "C", 30_000, serial))!;
    expect(third).toBeDefined();
    expect(third.namespace_id).toBe(ns);
  });

  it("hands a job whose lease expired to another worker, and the old owner can no longer finish it", async () => {
    const a = await db();
    await enqueueJob(a, { kind: "k" });
    const job = (await claimJob(a, ["k"], "dead", 1))!;
    // wait past the lease without timers: the lease is compared with the clock
    const until = Date.now() + 5;
    while (Date.now() < until) {}
    const again = (await claimJob(a, ["k"], "B", 30_000))!;
    expect(again.id).toBe(job.id);
    expect(again.attempts).toBe(2);
    expect(await renewLease(a, job.id, "dead", 30_000)).toBe(false);
    await completeJob(a, job.id, "dead");
    expect(await jobCounts(a)).toEqual({ running: 1 });
    await completeJob(a, job.id, "B");
    expect(await jobCounts(a)).toEqual({});
  });

  it("retries a failed attempt later, then marks the job failed after its last attempt", async () => {
    const a = await db();
    await enqueueJob(a, { kind: "k", maxAttempts: 2 });
    const j1 = (await claimJob(a, ["k"], "A", 30_000))!;
    expect(await failJob(a, j1, "A", "boom", true)).toBe("retry");
    // backoff: not claimable at once
    expect(await claimJob(a, ["k"], "A", 30_000)).toBeUndefined();
    await a.prepare("UPDATE jobs SET run_after = $1").run(new Date(0).toISOString());
    const j2 = (await claimJob(a, ["k"], "A", 30_000))!;
    expect(j2.attempts).toBe(2);
    expect(await failJob(a, j2, "A", "boom again", true)).toBe("failed");
    const row = await a.prepare("SELECT state, error FROM jobs").get();
    expect(row).toEqual({ state: "failed", error: "boom again" });
  });

  it("fails a permanent error at once, whatever attempts remain", async () => {
    const a = await db();
    await enqueueJob(a, { kind: "k", maxAttempts: 5 });
    const j = (await claimJob(a, ["k"], "A", 30_000))!;
    expect(await failJob(a, j, "A", "refused", false)).toBe("failed");
  });
});
