/**
 * A document's memories are drafted outside any transaction (store/memory-draft.ts) and committed by
 * the store with the document, only while the namespace's memories are as the draft read them
 * (store/document-commit.ts). Runs on the test backend (SQLite, and PostgreSQL in the PG pass).
 */
import { afterEach, describe, expect, it } from "vitest";
import { commitFacts, type DreamedFact, draftFacts } from "../../../src/engine/memory/dreamer.js";
import { storeDocument } from "../../../src/engine/services/documents.js";
import type { Db } from "../../../src/engine/store/db.js";
import { commitDocumentMemories } from "../../../src/engine/store/document-commit.js";
import { type DocumentRow, getDocumentRow } from "../../../src/engine/store/documents.js";
import { forgetMemories } from "../../../src/engine/store/forgotten.js";
import { writeMemories } from "../../../src/engine/store/memory-writes.js";
import { ensureNamespace } from "../../../src/engine/store/namespaces.js";
import { ensureOrganization, LOCAL_ORGANIZATION } from "../../../src/engine/store/organizations.js";
import { openTestEngine, type TestEngine } from "../memory/harness.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const BEES = "The user keeps bees on the roof.";
const fact = (memory: string, start = 0): DreamedFact => ({
  memory,
  isStatic: true,
  subject: "user",
  attribute: null,
  eventDate: null,
  source: { start, end: start + memory.length },
});

async function setUp(): Promise<{ db: Db; org: string; namespace: string; doc: DocumentRow }> {
  t = await openTestEngine();
  const db = t.engine.context.db;
  const org = await ensureOrganization(db, LOCAL_ORGANIZATION);
  const ns = await ensureNamespace(db, org.id, "drafts");
  const { id } = await storeDocument(db, ns, { content: `${BEES} ${BEES}`, customId: "bees" });
  return { db, org: org.id, namespace: ns.name, doc: (await getDocumentRow(db, id))! };
}

async function memoriesSaying(db: Db, text: string): Promise<{ id: string; is_forgotten: number }[]> {
  return (await db
    .prepare("SELECT id, is_forgotten FROM memories WHERE memory = $1 ORDER BY rowid")
    .all(text)) as { id: string; is_forgotten: number }[];
}

describe("a document's memories, drafted then committed", () => {
  it("reads its own writes while drafting: a fact told twice in one document is one memory with one source", async () => {
    const { db, doc } = await setUp();
    const applied = await commitFacts(db, doc, doc.generation, [fact(BEES), fact(BEES, BEES.length + 1)]);
    expect(applied.map((a) => a.outcome)).toEqual(["created", "merged"]);
    expect(await memoriesSaying(db, BEES)).toHaveLength(1);
    expect((await getDocumentRow(db, doc.id))!.dreaming_status).toBe("done");
  });

  it("writes nothing when the namespace's memories changed after the draft, and merges with them once drafted again", async () => {
    const { db, org, namespace, doc } = await setUp();
    const drafted = (await draftFacts(db, doc, doc.generation, [fact(BEES)]))!;
    expect(drafted.applied.map((a) => a.outcome)).toEqual(["created"]);
    // Another writer of the namespace's memories commits between the draft and its commit.
    const [written] = await writeMemories(db, org, namespace, [
      {
        memory: BEES,
        metadata: {},
        isStatic: true,
        isInference: false,
        subject: "user",
        attribute: null,
        eventDate: null,
        forgetAfter: null,
        documentId: null,
      },
    ]);
    const ref = { id: doc.id, namespaceId: doc.namespace_id };
    expect(await commitDocumentMemories(db, ref, doc.generation, drafted)).toBe("redraft");
    // Nothing of the draft was written: the document still waits for its memories.
    expect((await memoriesSaying(db, BEES)).map((m) => m.id)).toEqual([written!.id]);
    expect((await getDocumentRow(db, doc.id))!.dreaming_status).toBe("dreaming");
    // Drafted again, the fact is the memory written meanwhile, told again.
    const applied = await commitFacts(db, doc, doc.generation, [fact(BEES)]);
    expect(applied).toEqual([{ memoryId: written!.id, outcome: "merged", relatedTo: written!.id }]);
    expect((await memoriesSaying(db, BEES)).map((m) => m.id)).toEqual([written!.id]);
  });

  it("a forget between the draft and its commit sends the draft back: what the user forgot is not remembered again", async () => {
    const { db, doc } = await setUp();
    const [first] = await commitFacts(db, doc, doc.generation, [fact(BEES)]);
    // The document again (a new generation), drafted; then the user forgets the memory.
    const { id } = await storeDocument(
      db,
      { id: doc.namespace_id },
      { content: `${BEES} Again.`, customId: null },
    );
    expect(id).not.toBe(doc.id);
    const again = (await getDocumentRow(db, id))!;
    const drafted = (await draftFacts(db, again, again.generation, [fact(BEES)]))!;
    expect(drafted.applied[0]!.outcome).toBe("merged");
    await forgetMemories(db, doc.namespace_id, [first!.memoryId], "forgotten by id");
    const ref = { id: again.id, namespaceId: again.namespace_id };
    expect(await commitDocumentMemories(db, ref, again.generation, drafted)).toBe("redraft");
    // Drafted again: the forgotten memory stays forgotten (and is merged into, not made anew).
    await commitFacts(db, again, again.generation, [fact(BEES)]);
    expect(await memoriesSaying(db, BEES)).toEqual([{ id: first!.memoryId, is_forgotten: 1 }]);
  });

  it("commits nothing for a generation an upsert replaced", async () => {
    const { db, doc } = await setUp();
    const drafted = (await draftFacts(db, doc, doc.generation, [fact(BEES)]))!;
    // The document re-sent by its caller id with other content: its next generation.
    await storeDocument(db, { id: doc.namespace_id }, { content: "Replaced.", customId: "bees" });
    expect((await getDocumentRow(db, doc.id))!.generation).toBe(doc.generation + 1);
    const ref = { id: doc.id, namespaceId: doc.namespace_id };
    expect(await commitDocumentMemories(db, ref, doc.generation, drafted)).toBe("stale");
    expect(await memoriesSaying(db, BEES)).toEqual([]);
  });
});
