/**
 * Reading one memory over HTTP, as the spec has it (GET /ns/{namespace}/memories/{id}):
 * `include=documents` adds `included.document`, the most recently updated source document;
 * `include=related` adds parents, children and siblings; with both, every related memory carries
 * its own `document`. Memories made from documents in every way a namespace's history grows: a
 * later document, the same document replaced, turns appended to one conversation, a batch dreamed
 * together.
 */
import { describe, expect, it } from "vitest";
import type { Memory } from "../../src/api/index.js";
import { serverPerFile } from "../support/harness.js";

const { client } = serverPerFile({ workers: 1 });

/** Every memory of the namespace, read with both include values. */
async function readAll(namespace: string): Promise<Memory[]> {
  const ns = client.ns(namespace);
  const listed = await ns.memories.list({ limit: 100 });
  return Promise.all(
    listed.memories.map((m) => ns.memories.get(m.id, { include: ["related", "documents"] })),
  );
}

/** Each memory and each of its related memories carries a document; returns how many related ones. */
function expectDocumentsThroughout(memories: Memory[]): number {
  let related = 0;
  for (const m of memories) {
    expect(m.included?.document?.id, m.memory).toBeDefined();
    const { parents = [], children = [], siblings = [] } = m.included?.related ?? {};
    for (const r of [...parents, ...children, ...siblings]) {
      related++;
      expect(r.included?.document, `${r.memory} (related to ${m.memory})`).toBeDefined();
    }
  }
  return related;
}

describe("a memory read with include=related,documents", () => {
  it("gives the earlier version, made from another document, that document", async () => {
    const ns = client.ns("later");
    const paris = await ns.documents.add({ content: "I live in Paris.", date: "2026-01-01" });
    await ns.documents.waitFor(paris.id, { until: "memories" });
    const berlin = await ns.documents.add({ content: "I live in Berlin now.", date: "2026-02-01" });
    await ns.documents.waitFor(berlin.id, { until: "memories" });
    const all = await readAll("later");
    const latest = all.find((m) => /Berlin/.test(m.memory))!;
    expect(latest.included?.document?.id).toBe(berlin.id);
    const [parent] = latest.included!.related!.parents;
    expect(parent?.memory).toMatch(/Paris/);
    expect(parent?.included?.document?.id).toBe(paris.id);
    // And the other way: the earlier one's child carries the later document.
    const earlier = await ns.memories.get(parent!.id, { include: ["related", "documents"] });
    expect(earlier.included?.related?.children.map((c) => c.included?.document?.id)).toEqual([berlin.id]);
  });

  it("keeps each version's document when a document is replaced, a conversation grows, or a batch is dreamed together", async () => {
    const replaced = client.ns("replaced");
    await replaced.documents.add({
      id: "note",
      content: "I live in Paris. I work as a nurse.",
      date: "2026-01-01",
    });
    await replaced.documents.waitFor("note", { until: "memories" });
    await replaced.documents.add({
      id: "note",
      content: "I live in Lyon now. I work as a nurse.",
      date: "2026-02-01",
    });
    await replaced.documents.waitFor("note", { until: "memories" });

    const talk = client.ns("talk");
    await talk.documents.add({
      id: "chat",
      content: "user: I live in Paris.",
      append: true,
      date: "2026-01-01",
    });
    await talk.documents.waitFor("chat", { until: "memories" });
    await talk.documents.add({
      id: "chat",
      content: "user: Actually I moved to Oslo, I live in Oslo now.",
      append: true,
      date: "2026-02-01",
    });
    await talk.documents.waitFor("chat", { until: "memories" });

    const batch = client.ns("batch");
    const first = await batch.documents.add({
      content: "I live in Paris.",
      date: "2026-01-01",
      dreaming: "dynamic",
    });
    const second = await batch.documents.add({
      content: "I live in Rome now.",
      date: "2026-02-01",
      dreaming: "dynamic",
    });
    for (const d of [first, second]) await batch.documents.waitFor(d.id, { until: "memories" });

    // Each history above has a superseded version (lists show latest memories: one related each).
    for (const namespace of ["replaced", "talk", "batch"])
      expect(expectDocumentsThroughout(await readAll(namespace)), namespace).toBeGreaterThanOrEqual(1);
  });
});
