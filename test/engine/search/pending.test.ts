import { afterAll, describe, expect, it } from "vitest";
import { serverPerFile, startTestServer, tempDir } from "../../support/harness.js";

/**
 * Documents not processed yet: the namespace record counts them, and search matches their stored
 * text (search/pending.ts). No workers: what is added stays queued, deterministically.
 */
describe("search and the namespace record before processing", () => {
  const { client } = serverPerFile({ workers: 0 });

  it("counts the documents still being processed on the namespace record", async () => {
    const ns = client.ns("counted");
    expect((await ns.update({ supportingContext: null })).processing).toEqual({ documents: 0, dreaming: 0 });
    await ns.documents.add({ content: "The boiler was serviced in March." });
    await ns.documents.add({ content: "The car goes to the garage on Friday." });
    expect((await ns.get()).processing).toEqual({ documents: 2, dreaming: 2 });
  });

  it("matches a queued document's text, a passage at a time, marked pending", async () => {
    const ns = client.ns("queued");
    const { id } = await ns.documents.add({
      content: "I renewed my passport today. My gym locker is number 42, next to the sauna.",
      metadata: { topic: "gym" },
    });
    const { results } = await ns.search({ query: "gym locker number", include: { documents: true } });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      id: `${id}#29`,
      chunk: "My gym locker is number 42, next to the sauna.",
      documentId: id,
      pending: true,
      metadata: { topic: "gym" },
      included: { document: { id } },
    });
    expect(results[0]!.similarity).toBeGreaterThanOrEqual(0.3);
    expect((await ns.search({ query: "gym locker", searchMode: "chunks" })).results).toHaveLength(1);
    // Memories mode answers with memories only.
    expect((await ns.search({ query: "gym locker", searchMode: "memories" })).results).toEqual([]);
    // The filter holds for what is not processed as for the rest.
    const other = { field: "topic", operator: "eq", value: "travel" } as const;
    expect((await ns.search({ query: "gym locker", filter: other })).results).toEqual([]);
    // A passage sharing too little of the query stays under the threshold.
    expect((await ns.search({ query: "sauna temperature humidity schedule rules" })).results).toEqual([]);
  });
});

describe("a forgotten sentence in a document processed again", () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  it("is not matched in the stored text while the document waits", async () => {
    const first = await startTestServer(dir.path);
    const ns = first.client().ns("home");
    const content = "Zed likes green tea in the morning.\nZed's cat is named Pixel.";
    const { id } = await ns.documents.add({ id: "zed", content, dreaming: "instant" });
    await ns.documents.waitFor(id, { until: "memories" });
    const { memories } = await ns.documents.get(id, { include: ["memories"] });
    const cat = memories!.find((m) => m.memory.includes("Pixel"));
    expect(cat).toBeDefined();
    await ns.memories.forget([cat!.id]);
    await first.close();

    // Sent again with new metadata: queued again, and nothing processes it here.
    const second = await startTestServer(dir.path, { workers: 0 });
    try {
      const again = second.client().ns("home");
      await again.documents.add({ id: "zed", content, metadata: { v: 2 } });
      expect((await again.get()).processing).toEqual({ documents: 1, dreaming: 1 });
      const tea = await again.search({ query: "green tea morning" });
      expect(tea.results.some((h) => h.pending && h.chunk === "Zed likes green tea in the morning.")).toBe(
        true,
      );
      const pixel = await again.search({ query: "cat named Pixel", threshold: 0 });
      expect(pixel.results.filter((h) => h.pending)).toEqual([]);
      expect(JSON.stringify(pixel.results)).not.toContain("Pixel");
    } finally {
      await second.close();
    }
  });
});
