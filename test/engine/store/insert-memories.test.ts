/**
 * insertMemories (many new memories, a batch per statement) writes what insertMemory writes one at
 * a time: the same memory rows, sources and vectors, found by search the same way. Runs on the
 * test backend (SQLite, and PostgreSQL in the PG pass).
 */
import { afterEach, describe, expect, it } from "vitest";
import { storeDocument } from "../../../src/engine/services/documents.js";
import { transaction } from "../../../src/engine/store/db.js";
import { insertMemories, insertMemory, type NewMemoryRow } from "../../../src/engine/store/memories.js";
import { ensureNamespace } from "../../../src/engine/store/namespaces.js";
import { ensureOrganization, LOCAL_ORGANIZATION } from "../../../src/engine/store/organizations.js";
import { openTestEngine, type TestEngine } from "../memory/harness.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const facts = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    memory: `Fact ${i}: ${["Ana", "Bo", "Cy"][i % 3]} keeps ${i % 7} ${i % 2 ? "bees" : "goats"} near Porto.`,
    source: { start: i * 10, end: i * 10 + 9 },
    embedding: Float32Array.from({ length: 4 }, (_, k) => (i + 1) * (k + 1) * 0.125),
  }));

async function seed(engine: TestEngine, namespace: string, n: number, batched: boolean) {
  const db = engine.engine.context.db;
  const ns = await ensureNamespace(db, (await ensureOrganization(db, LOCAL_ORGANIZATION)).id, namespace);
  return await transaction(db, async () => {
    const { id: documentId } = await storeDocument(db, ns, {
      content: "Ana, Bo and Cy near Porto.",
      customId: "d",
    });
    const rows: NewMemoryRow[] = facts(n).map((f, i) => ({
      namespaceId: ns.id,
      memory: f.memory,
      metadata: { i },
      isStatic: i % 2 === 0,
      isInference: i % 3 === 0,
      subject: ["ana", "bo", "cy"][i % 3]!,
      attribute: i % 4 === 0 ? "animals" : null,
      eventDate: i % 5 === 0 ? "2024-03-01" : null,
      forgetAfter: i % 6 === 0 ? "2099-01-01T00:00:00.000Z" : null,
      // One written without a source document, as a direct (legacy) write is.
      documentId: i === 1 ? null : documentId,
      source: f.source,
      vector: i % 2 === 0 ? { model: "test-model", embedding: f.embedding } : undefined,
      context: i % 3 === 1 ? `[2024-03-01] turn ${i}` : undefined,
      speaker: i % 3 === 2 ? "ana" : null,
    }));
    if (batched) return await insertMemories(db, rows);
    const ids: string[] = [];
    for (const r of rows) ids.push((await insertMemory(db, r)).id);
    return ids;
  });
}

async function stored(engine: TestEngine, namespace: string) {
  const db = engine.engine.context.db;
  const memories = (
    await db
      .prepare(
        `SELECT m.memory, m.metadata, m.is_static, m.is_inference, m.is_latest, m.is_forgotten, m.version,
         m.parent_memory_id, m.root_memory_id, m.forget_after, m.forget_reason, m.subject, m.attribute,
         m.event_date, m.memory_key, m.context, m.speaker, m.document_id IS NULL AS no_document,
         s.start_offset, s.end_offset, v.model, v.embedding
       FROM memories m JOIN namespaces n ON n.id = m.namespace_id
       LEFT JOIN memory_sources s ON s.memory_id = m.id
       LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid
       WHERE n.name = $1 ORDER BY m.memory`,
      )
      .all(namespace)
  ).map((r) => ({ ...r, embedding: r.embedding ? [...(r.embedding as Uint8Array)] : null }));
  return memories;
}

describe("insertMemories", () => {
  it("stores the rows, sources and vectors insertMemory stores, over several statements", async () => {
    t = await openTestEngine();
    // 450: more than two batches of 200.
    const one = await seed(t, "one-by-one", 450, false);
    const many = await seed(t, "batched", 450, true);
    expect(many).toHaveLength(450);
    expect(new Set(many).size).toBe(450);
    const a = stored(t, "one-by-one");
    const b = stored(t, "batched");
    expect(await a).toHaveLength(450);
    expect(await b).toEqual(await a);
    // Ids come back in input order: the first one is the first fact's memory.
    const first = (await t.call("GET", `/ns/batched/memories/${many[0]}`)).body as { memory: string };
    expect(first.memory).toBe(facts(1)[0]!.memory);
    expect(one).toHaveLength(450);
    // Found by search as the one-by-one memories are (the index was built at commit).
    for (const ns of ["one-by-one", "batched"]) {
      const res = await t.call("POST", `/ns/${ns}/search`, {
        query: "Who keeps bees near Porto?",
        searchMode: "memories",
        limit: 5,
      });
      expect(res.status).toBe(200);
      expect(res.body.results.length).toBe(5);
    }
    const hits = async (ns: string) =>
      (
        await t!.call("POST", `/ns/${ns}/search`, { query: "Fact 17 bees", searchMode: "memories", limit: 3 })
      ).body.results.map((r: { memory: string }) => r.memory);
    expect(await hits("batched")).toEqual(await hits("one-by-one"));
  });

  it("refuses a new version of a memory (insertMemory's path)", async () => {
    t = await openTestEngine();
    const db = t.engine.context.db;
    const ns = await ensureNamespace(db, (await ensureOrganization(db, LOCAL_ORGANIZATION)).id, "x");
    const base = {
      namespaceId: ns.id,
      memory: "Ana keeps bees.",
      metadata: {},
      isStatic: false,
      isInference: false,
      subject: "ana",
      attribute: null,
      eventDate: null,
      forgetAfter: null,
      documentId: null,
    };
    const parent = await transaction(db, async () => await insertMemory(db, base));
    await expect(
      (async () =>
        await transaction(
          db,
          async () => await insertMemories(db, [{ ...base, memory: "Ana keeps goats.", parent }]),
        ))(),
    ).rejects.toThrow(/insertMemory/);
  });
});
