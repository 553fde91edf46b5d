import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";

const children: ServeChild[] = [];
let dir: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await Promise.all(children.splice(0).map(stopChild));
  dir?.remove();
});

describe("two memctx processes on one data directory", () => {
  it("add, list and search at the same time without errors, and lose nothing", async () => {
    dir = tempDir();
    const [a, b] = await Promise.all([spawnServe(dir.path), spawnServe(dir.path)]);
    children.push(a, b);
    const clients = [a, b].map((s) => new MemoryClient({ baseUrl: s.url, apiKey: TEST_KEY, maxRetries: 0 }));
    try {
      const PER_PROCESS = 100;
      const ids: string[][] = [[], []];
      await Promise.all(
        clients.map(async (client, p) => {
          const ns = client.ns("shared");
          for (let i = 0; i < PER_PROCESS; i++) {
            const r = await ns.documents.add({ content: `Process ${p} document ${i} about shared storage.` });
            ids[p]!.push(r.id);
            // read while the other process writes: lists and search must not fail
            if (i % 10 === 0) {
              await ns.documents.list({ limit: 5 });
              await ns.chunks.list({ limit: 5 });
              await ns.search({ query: "shared storage document", searchMode: "chunks" });
            }
          }
        }),
      );
      // Every document is visible and done through either process.
      for (const [p, client] of clients.entries()) {
        for (const id of ids[1 - p]!) {
          const doc = await client.ns("shared").documents.waitFor(id, { maxPollIntervalMs: 200 });
          expect(doc.system.status).toBe("done");
        }
      }
      const list = await clients[0]!.ns("shared").documents.list({ limit: 1 });
      expect(list.pagination.totalItems).toBe(2 * PER_PROCESS);
      const chunks = await clients[1]!.ns("shared").chunks.list({ limit: 1 });
      expect(chunks.pagination.totalItems).toBe(2 * PER_PROCESS);
      const found = await clients[0]!
        .ns("shared")
        .search({ query: "Process 1 document 99", searchMode: "chunks" });
      expect(found.results.length).toBeGreaterThan(0);
      expect(a.stdout()).not.toMatch(/error/i);
      expect(b.stdout()).not.toMatch(/error/i);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});
