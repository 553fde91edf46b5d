import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addFacts, openTestEngine, type TestEngine } from "./harness.js";

let t: TestEngine;
beforeEach(async () => {
  t = await openTestEngine();
});
afterEach(async () => {
  await t.close();
});

const listed = async (ns: string, forgotten = false) =>
  (
    (
      await t.call(
        "POST",
        `/ns/${ns}/list/memories?limit=100`,
        forgotten ? { include: { forgotten: true } } : {},
      )
    ).body.memories as { id: string }[]
  ).map((m) => m.id);

const searched = async (ns: string, query: string) =>
  (
    (await t.call("POST", `/ns/${ns}/search`, { query, searchMode: "memories" })).body.results as {
      id: string;
    }[]
  ).map((h) => h.id);

const profileIds = async (ns: string) => {
  const p = (await t.call("POST", `/ns/${ns}/profile`, {})).body.profile;
  return [...p.static, ...p.dynamic].map((m: { id: string }) => m.id);
};

describe("forgetting memories", () => {
  it("forgets by id: gone from lists, search and the profile, while a direct read answers isForgotten", async () => {
    const { memoryIds } = await addFacts(t, "alice", [
      { memory: "Alice is allergic to peanuts.", subject: "alice", isStatic: true },
      { memory: "Alice plays the violin.", subject: "alice", isStatic: true },
    ]);
    const [peanuts, violin] = memoryIds as [string, string];
    expect(await searched("alice", "peanuts")).toEqual([peanuts]);

    const res = await t.call("DELETE", "/ns/alice/memories", { ids: [peanuts, "mem_unknown"] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      count: 1,
      matches: [{ id: peanuts, memory: "Alice is allergic to peanuts." }],
      errors: [{ id: "mem_unknown", error: "memory not found" }],
    });

    expect(await listed("alice")).toEqual([violin]);
    expect((await listed("alice", true)).sort()).toEqual([peanuts, violin].sort());
    expect(await searched("alice", "peanuts")).toEqual([]);
    expect(await profileIds("alice")).toEqual([violin]);
    const read = await t.call("GET", `/ns/alice/memories/${peanuts}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: peanuts, isForgotten: true, forgetReason: "forgotten by id" });
  });

  it("does not forget another namespace's memory by id", async () => {
    const [bobs] = (await addFacts(t, "bob", [{ memory: "Bob plays chess." }])).memoryIds as [string];
    await addFacts(t, "alice", [{ memory: "Alice plays golf." }]);
    const res = await t.call("DELETE", "/ns/alice/memories", { ids: [bobs] });
    expect(res.body).toEqual({ count: 0, matches: [], errors: [{ id: bobs, error: "memory not found" }] });
    expect(await listed("bob")).toEqual([bobs]);
  });

  it("forgets by meaning: a dry run returns the matches and changes nothing, the real run forgets them", async () => {
    const { memoryIds } = await addFacts(t, "alice", [
      { memory: "Alice is allergic to peanuts.", subject: "alice", isStatic: true },
      { memory: "Alice likes hiking in the Alps.", subject: "alice", isStatic: true },
      { memory: "Bob plays the violin in an orchestra.", subject: "bob", isStatic: true },
    ]);
    const [peanuts] = memoryIds as [string];

    const dry = await t.call("DELETE", "/ns/alice/memories/semantic", {
      query: "allergic to peanuts",
      dryRun: true,
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      count: 0,
      matches: [{ id: peanuts, memory: "Alice is allergic to peanuts." }],
      errors: [],
    });
    expect(await listed("alice")).toHaveLength(3);

    const real = await t.call("DELETE", "/ns/alice/memories/semantic", { query: "allergic to peanuts" });
    expect(real.body).toEqual({
      count: 1,
      matches: [{ id: peanuts, memory: "Alice is allergic to peanuts." }],
      errors: [],
    });
    expect(await listed("alice")).not.toContain(peanuts);
    expect(await listed("alice")).toHaveLength(2);
    expect(await searched("alice", "peanuts")).toEqual([]);
    expect((await t.call("GET", `/ns/alice/memories/${peanuts}`)).body.isForgotten).toBe(true);

    // Nothing left that means it.
    const again = await t.call("DELETE", "/ns/alice/memories/semantic", {
      query: "allergic to peanuts",
      dryRun: true,
    });
    expect(again.body.matches).toEqual([]);
  });

  it("rejects a forget by meaning without a query, naming the field", async () => {
    const res = await t.call("DELETE", "/ns/alice/memories/semantic", { query: "  ", dryRun: true });
    expect(res.status).toBe(400);
    expect(res.body.details).toContain("query");
  });

  it("counts a memory past its forget_after as forgotten everywhere but a direct read", async () => {
    const expired = await addFacts(
      t,
      "alice",
      [{ memory: "Alice is staying at the Hilton in Rome.", subject: "alice" }],
      {
        metadata: { forgetAfter: "2020-01-01" },
      },
    );
    const future = await addFacts(
      t,
      "alice",
      [{ memory: "Alice has a dentist appointment.", subject: "alice" }],
      {
        metadata: { forgetAfter: "2999-01-01T00:00:00Z" },
      },
    );
    const fact = await addFacts(t, "alice", [
      { memory: "Alice is waiting for a parcel.", subject: "alice", forgetAfter: "2021-06-01" },
    ]);
    const [gone] = expired.memoryIds as [string];
    const [kept] = future.memoryIds as [string];
    const [goneToo] = fact.memoryIds as [string];

    expect(await listed("alice")).toEqual([kept]);
    expect((await listed("alice", true)).sort()).toEqual([gone, kept, goneToo].sort());
    expect(await searched("alice", "Hilton Rome")).toEqual([]);
    expect(await profileIds("alice")).toEqual([kept]);
    expect((await t.call("GET", `/ns/alice/memories/${gone}`)).body).toMatchObject({
      isForgotten: true,
      forgetAfter: "2020-01-01T00:00:00.000Z",
    });
    expect((await t.call("GET", `/ns/alice/memories/${goneToo}`)).body.isForgotten).toBe(true);
    expect((await t.call("GET", `/ns/alice/memories/${kept}`)).body.isForgotten).toBe(false);
  });
});
