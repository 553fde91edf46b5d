import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TEST_BACKEND } from "../../support/harness.js";
import { addFacts, openTestEngine, type TestEngine } from "./harness.js";

let t: TestEngine;
beforeEach(async () => {
  t = await openTestEngine();
});
afterEach(async () => {
  await t.close();
});

const memories = (refs: { memory: string }[]) => refs.map((r) => r.memory);

/** What a dreamer extracts from a short first conversation with Alice, and one a week later. */
async function conversation() {
  await addFacts(
    t,
    "alice",
    [
      {
        memory: "Alice works as a nurse at Saint Louis hospital.",
        isStatic: true,
        subject: "alice",
        attribute: "work",
      },
      { memory: "Alice lives in Paris.", isStatic: true, subject: "alice", attribute: "home" },
      { memory: "Alice loves jazz.", isStatic: true, subject: "alice", attribute: "likes_jazz" },
      {
        memory: "Alice went hiking with her sister Emma on 9 May 2024.",
        subject: "alice",
        eventDate: "2024-05-09",
      },
    ],
    { metadata: { topic: "intro" } },
  );
  await addFacts(
    t,
    "alice",
    [
      {
        memory: "Alice is flying to Tokyo for a conference on 17 May 2024.",
        subject: "alice",
        eventDate: "2024-05-17",
      },
    ],
    { metadata: { topic: "travel" } },
  );
}

describe("POST /ns/{namespace}/profile", () => {
  it("splits a conversation's memories into static facts and recent dynamic facts", async () => {
    await conversation();
    const res = await t.call("POST", "/ns/alice/profile", {});
    expect(res.status).toBe(200);
    const { profile } = res.body;
    expect(memories(profile.static).sort()).toEqual(
      [
        "Alice lives in Paris.",
        "Alice loves jazz.",
        "Alice works as a nurse at Saint Louis hospital.",
      ].sort(),
    );
    // Most recent first.
    expect(memories(profile.dynamic)).toEqual([
      "Alice is flying to Tokyo for a conference on 17 May 2024.",
      "Alice went hiking with her sister Emma on 9 May 2024.",
    ]);
    expect(Object.keys(profile.buckets)).toEqual(["preferences"]);
    expect(memories(profile.buckets.preferences)).toEqual(["Alice loves jazz."]);
  });

  it("shows only the current version of an updated fact", async () => {
    await conversation();
    await addFacts(t, "alice", [
      { memory: "Alice lives in Lyon.", isStatic: true, subject: "alice", attribute: "home" },
    ]);
    const { profile } = (await t.call("POST", "/ns/alice/profile", {})).body;
    expect(memories(profile.static)).toContain("Alice lives in Lyon.");
    expect(memories(profile.static)).not.toContain("Alice lives in Paris.");
  });

  it("applies a filter to every section", async () => {
    await conversation();
    const { profile } = (
      await t.call("POST", "/ns/alice/profile", {
        filter: { field: "topic", operator: "eq", value: "travel" },
      })
    ).body;
    expect(profile.static).toEqual([]);
    expect(memories(profile.dynamic)).toEqual(["Alice is flying to Tokyo for a conference on 17 May 2024."]);
    expect(profile.buckets.preferences).toEqual([]);
  });

  it("fills custom buckets by their description and narrows to the buckets asked for", async () => {
    await conversation();
    const put = await t.call("PUT", "/ns/alice/profile/buckets", {
      buckets: { travel: "Trips, flights and travel plans", family: "Relatives and family members" },
    });
    expect(put.status).toBe(200);
    const { profile } = (await t.call("POST", "/ns/alice/profile", {})).body;
    expect(Object.keys(profile.buckets).sort()).toEqual(["family", "preferences", "travel"]);
    expect(memories(profile.buckets.travel)).toEqual([
      "Alice is flying to Tokyo for a conference on 17 May 2024.",
    ]);
    expect(memories(profile.buckets.family)).toEqual([
      "Alice went hiking with her sister Emma on 9 May 2024.",
    ]);

    const narrowed = (await t.call("POST", "/ns/alice/profile", { buckets: ["travel"] })).body.profile;
    expect(Object.keys(narrowed.buckets)).toEqual(["travel"]);
    expect(narrowed.static.length).toBeGreaterThan(0);
  });

  it("answers 400 naming a bucket the namespace does not have", async () => {
    const res = await t.call("POST", "/ns/alice/profile", { buckets: ["preferences", "holidays"] });
    expect(res.status).toBe(400);
    expect(res.body.details).toContain("'holidays'");
  });

  // The query plan is SQLite's (EXPLAIN QUERY PLAN); PostgreSQL's migration 2 makes the same index.
  it.skipIf(TEST_BACKEND === "postgres")(
    "reads each section from the index of live latest memories by kind, not by walking the namespace",
    async () => {
      await conversation();
      // A namespace with no static memory at all was walked whole on every profile to find none.
      const db = t.engine.context.db;
      const plan = (await db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT m.id, m.memory FROM memories m WHERE m.namespace_id = $1 AND m.is_latest = 1
           AND m.is_forgotten = 0 AND (m.forget_after IS NULL OR m.forget_after > $2) AND 1 AND m.is_static = $3
         ORDER BY m.created_at DESC, m.rowid DESC LIMIT $4`,
        )
        .all("x", "y", 1, 20)) as { detail: string }[];
      expect(plan.map((r) => r.detail).join("\n")).toMatch(
        /USING INDEX memories_profile \(namespace_id=\? AND is_static=\?\)/,
      );
    },
  );

  it("answers an empty profile with every effective bucket for a namespace never written", async () => {
    const res = await t.call("POST", "/ns/nobody/profile", {});
    expect(res.body).toEqual({ profile: { static: [], dynamic: [], buckets: { preferences: [] } } });
  });
});

describe("profile buckets", () => {
  it("starts every namespace with the organization's preferences bucket", async () => {
    const res = await t.call("GET", "/ns/alice/profile/buckets");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.buckets)).toEqual(["preferences"]);
  });

  it("adds and updates namespace buckets, leaving the others, and deletes them by name", async () => {
    await t.call("PUT", "/ns/alice/profile/buckets", {
      buckets: { travel: "Trips", work: "Job and colleagues" },
    });
    const updated = await t.call("PUT", "/ns/alice/profile/buckets", {
      buckets: { travel: "Trips and flights" },
    });
    expect(updated.body.buckets).toMatchObject({ travel: "Trips and flights", work: "Job and colleagues" });
    expect(Object.keys(updated.body.buckets).sort()).toEqual(["preferences", "travel", "work"]);

    // Another namespace sees only the organization's buckets.
    expect(Object.keys((await t.call("GET", "/ns/bob/profile/buckets")).body.buckets)).toEqual([
      "preferences",
    ]);

    const deleted = await t.call("DELETE", "/ns/alice/profile/buckets", {
      buckets: ["travel", "never-there"],
    });
    expect(deleted.status).toBe(200);
    expect(Object.keys(deleted.body.buckets).sort()).toEqual(["preferences", "work"]);
  });

  it("refuses with 403 naming the bucket any change to the organization-owned preferences bucket", async () => {
    const put = await t.call("PUT", "/ns/alice/profile/buckets", {
      buckets: { travel: "Trips", preferences: "Mine now" },
    });
    expect(put.status).toBe(403);
    expect(put.body.error).toContain("preferences");
    // Nothing changed, not even the other bucket of the request.
    const after = (await t.call("GET", "/ns/alice/profile/buckets")).body.buckets;
    expect(Object.keys(after)).toEqual(["preferences"]);
    expect(after.preferences).not.toBe("Mine now");

    const del = await t.call("DELETE", "/ns/alice/profile/buckets", { buckets: ["preferences"] });
    expect(del.status).toBe(403);
    expect(del.body.error).toContain("preferences");
    expect(Object.keys((await t.call("GET", "/ns/alice/profile/buckets")).body.buckets)).toEqual([
      "preferences",
    ]);
  });

  it("rejects bad bucket names and empty puts, naming the rule", async () => {
    const bad = await t.call("PUT", "/ns/alice/profile/buckets", { buckets: { Travel: "Trips" } });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toContain("^[a-z0-9][a-z0-9_-]*$");
    const empty = await t.call("PUT", "/ns/alice/profile/buckets", { buckets: {} });
    expect(empty.status).toBe(400);
    const dup = await t.call("DELETE", "/ns/alice/profile/buckets", { buckets: ["a", "a"] });
    expect(dup.status).toBe(400);
  });
});
