/**
 * Security review: DELETE /ns/{ns}?moveTo= replaces a target document that has the same caller id;
 * what was learned from the replaced document must go with it, as when it is deleted directly.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { noDreaming } from "../../src/engine/pipeline/dreamer.js";
import { TEST_KEY, tempDir } from "../support/harness.js";

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
afterEach(async () => {
  await engine?.close();
  dir?.remove();
});

async function call(method: string, path: string, body?: unknown) {
  const res = await engine.fetch(
    new Request(`http://memctx.local${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
  // biome-ignore lint/suspicious/noExplicitAny: read field by field
  return { status: res.status, json: (await res.json()) as any };
}

describe("moving a namespace's content onto another", () => {
  it("drops the memories of a target document that a moved document replaces", async () => {
    dir = tempDir("memctx-review-");
    engine = await openEngine({
      dataDir: dir.path,
      apiKey: TEST_KEY,
      workers: 0,
      embedder: null,
      dreamer: noDreaming,
      log: () => {},
    });
    await call("POST", "/ns/src/document", { content: "Alice lives in Paris.", id: "profile" });
    const target = await call("POST", "/ns/dst/document", { content: "Alice lives in Rome.", id: "profile" });
    // A memory learned from the target's document (as dreaming stores it).
    const db = engine.context.db;
    const ns = (await db.prepare("SELECT id FROM namespaces WHERE name = 'dst'").get()) as { id: string };
    const t = new Date().toISOString();
    await db
      .prepare(
        "INSERT INTO memories (id, namespace_id, memory, document_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)",
      )
      .run("mem_rome", ns.id, "Alice lives in Rome.", target.json.id, t, t);
    await db
      .prepare("INSERT INTO memory_sources (memory_id, document_id, created_at) VALUES ($1, $2, $3)")
      .run("mem_rome", target.json.id, t);

    expect((await call("DELETE", "/ns/src?moveTo=dst")).status).toBe(202);

    const doc = await call("GET", "/ns/dst/document/profile");
    expect(doc.json.content).toBe("Alice lives in Paris.");
    const memories = await call("POST", "/ns/dst/list/memories", {});
    expect(memories.json.memories).toEqual([]);
  });
});
