import { describe, expect, it } from "vitest";
import { failedBatchItems, hasPartialFailure, itemErrors } from "../../src/client/index.js";
import { scriptedServerPerFile } from "../support/scripted-server.js";

const { server, client } = scriptedServerPerFile({ maxRetries: 0 });

describe("partial failures inside a 200 come back as data", () => {
  it("returns a batch with failed items and finds them with their input positions", async () => {
    server.reply({
      json: {
        results: [
          { id: "a", status: "queued" },
          { id: "", status: "error", error: "fetch failed", details: "404", url: "https://example.com/x" },
          { id: "c", status: "done" },
          { id: "unknown", status: "error", error: "content too large" },
        ],
        failed: 2,
        success: 2,
      },
    });
    const res = await client.batch.add({
      documents: [
        { content: "a", customId: "a" },
        { content: "https://example.com/x" },
        { content: "c", customId: "c" },
        { content: "huge" },
      ],
    });
    expect(res.failed).toBe(2);
    expect(hasPartialFailure(res)).toBe(true);
    const failed = failedBatchItems(res);
    expect(failed.map((f) => [f.index, f.error, f.url])).toEqual([
      [1, "fetch failed", "https://example.com/x"],
      [3, "content too large", undefined],
    ]);
  });

  it("reports no partial failure for a clean batch", async () => {
    server.reply({ json: { results: [{ id: "a", status: "queued" }], failed: 0, success: 1 } });
    const res = await client.batch.add({ documents: ["a"] });
    expect(hasPartialFailure(res)).toBe(false);
    expect(failedBatchItems(res)).toEqual([]);
  });

  it("returns a document delete with per-id errors", async () => {
    server.reply({ json: { count: 1, errors: [{ id: "missing", error: "not found" }] } });
    const res = await client.ns("alice").documents.delete(["d1", "missing"]);
    expect(res.count).toBe(1);
    expect(hasPartialFailure(res)).toBe(true);
    expect(itemErrors(res)).toEqual([{ id: "missing", error: "not found" }]);
  });

  it("returns a forget with per-id errors and its matches", async () => {
    server.reply({
      json: {
        count: 1,
        matches: [{ id: "m1", memory: "likes tea" }],
        errors: [{ id: "m9", error: "not found" }],
      },
    });
    const res = await client.ns("alice").memories.forget(["m1", "m9"]);
    expect(res.matches).toEqual([{ id: "m1", memory: "likes tea" }]);
    expect(hasPartialFailure(res)).toBe(true);
    expect(itemErrors(res).map((e) => e.id)).toEqual(["m9"]);

    server.reply({ json: { count: 0, matches: [{ id: "m1", memory: "likes tea" }], errors: [] } });
    const dry = await client.ns("alice").memories.forgetSemantic({ query: "tea", dryRun: true });
    expect(hasPartialFailure(dry)).toBe(false);
  });
});
