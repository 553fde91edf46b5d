import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addFacts, openTestEngine, type TestEngine } from "./harness.js";

let t: TestEngine;
beforeEach(async () => {
  t = await openTestEngine();
});
afterEach(async () => {
  await t.close();
});

const home = (city: string) => ({
  memory: `Alice lives in ${city}.`,
  isStatic: true,
  subject: "alice",
  attribute: "home",
});

describe("GET /ns/{namespace}/memories/{id}", () => {
  it("answers 404 for another namespace's memory and for an unknown id", async () => {
    const [id] = (await addFacts(t, "alice", [home("Paris")])).memoryIds;
    await addFacts(t, "bob", [home("Oslo")]);
    expect((await t.call("GET", `/ns/alice/memories/${id}`)).status).toBe(200);
    const other = await t.call("GET", `/ns/bob/memories/${id}`);
    expect(other.status).toBe(404);
    expect(other.body.error).toMatch(/not found/i);
    expect((await t.call("GET", `/ns/never-written/memories/${id}`)).status).toBe(404);
    expect((await t.call("GET", "/ns/alice/memories/mem_unknown")).status).toBe(404);
  });

  it("adds the most recently updated source document, and with related each related memory's own", async () => {
    const first = await addFacts(t, "alice", [home("Paris")], { metadata: { chat: "1" } });
    const second = await addFacts(t, "alice", [home("Berlin")], { metadata: { chat: "2" } });
    const [paris] = first.memoryIds;
    const [berlin] = second.memoryIds;

    const plain = await t.call("GET", `/ns/alice/memories/${berlin}`);
    expect(plain.body.included).toBeUndefined();

    const withDoc = await t.call("GET", `/ns/alice/memories/${berlin}?include=documents`);
    expect(withDoc.body.included.document).toMatchObject({ id: second.documentId, metadata: { chat: "2" } });
    expect(withDoc.body.included.related).toBeUndefined();

    const both = await t.call("GET", `/ns/alice/memories/${berlin}?include=related,documents`);
    const [parent] = both.body.included.related.parents;
    expect(parent.id).toBe(paris);
    expect(parent.included.document.id).toBe(first.documentId);
  });

  it("leaves forgotten memories out of related lists but walks on past them", async () => {
    const [v1] = (await addFacts(t, "alice", [home("Paris")])).memoryIds;
    const [v2] = (await addFacts(t, "alice", [home("Berlin")])).memoryIds;
    const [v3] = (await addFacts(t, "alice", [home("Lisbon")])).memoryIds;
    await t.call("DELETE", "/ns/alice/memories", { ids: [v2] });
    const read = await t.call("GET", `/ns/alice/memories/${v3}?include=related`);
    expect(read.body.included.related.parents.map((m: { id: string }) => m.id)).toEqual([v1]);
    const first = await t.call("GET", `/ns/alice/memories/${v1}?include=related`);
    expect(first.body.included.related.children.map((m: { id: string }) => m.id)).toEqual([v3]);
  });

  it("rejects relatedLimit outside 1..100 and an unknown include, naming the parameter", async () => {
    const [id] = (await addFacts(t, "alice", [home("Paris")])).memoryIds;
    for (const q of ["relatedLimit=0", "relatedLimit=101", "include=everything"]) {
      const res = await t.call("GET", `/ns/alice/memories/${id}?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.details).toContain(q.split("=")[0]);
    }
  });
});
