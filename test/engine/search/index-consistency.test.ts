/**
 * The search index (search_spaces, search_units, search_contexts, their postings, search_terms) is
 * kept by triggers and the indexing at commit through every write path: inserts, re-processing (chunks replaced), memories'
 * context updates, forgetting, document deletes (cascades), a namespace moved into another and
 * deleted. After all of them it must equal the index built from the rows as they are.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, transaction } from "../../../src/engine/store/db.js";
import { insertMemory } from "../../../src/engine/store/memories.js";
import { stemTexts } from "../../../src/engine/text/terms.js";
import { directMemory, testDatabase } from "../../support/harness.js";
import { until } from "../../support/wait.js";
import { openTestEngine, type TestEngine } from "../memory/harness.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function settle(engine: TestEngine, ns: string, count: number) {
  await until(
    async () => {
      const list = (await engine.call("POST", `/ns/${ns}/list/documents?limit=100`, {})).body.documents as {
        system: { status: string; dreamingStatus: string };
      }[];
      return list.filter((d) => d.system.status === "done" && d.system.dreamingStatus === "done").length;
    },
    (done) => done >= count,
    `${ns}: ${count} documents processed`,
  );
}

describe("the search index", () => {
  it("equals the index rebuilt from the rows after every kind of write", async () => {
    t = await openTestEngine({ workers: 1 });
    const add = (ns: string, id: string, content: string) =>
      t!.call("POST", `/ns/${ns}/document`, { id, content, dreaming: "instant" });
    await add(
      "a",
      "one",
      "Alice: I moved to Berlin last year.\nBob: Do you like the city?\nAlice: I love the parks.",
    );
    await add("a", "two", "Alice adopted a cat named Miso. Alice plays the cello on Sundays.");
    await add("b", "one", "Bob works as a nurse in Lisbon and runs every morning.");
    // Two memories of one short text share it as context (posted once).
    await add("a", "three", "Dana grows tomatoes. Dana sings in a choir.");
    await settle(t, "a", 3);
    await settle(t, "b", 1);
    // Re-processed with new content: its chunks and memories are replaced.
    await add("a", "one", "Alice: I moved to Munich this spring.\nBob: How is the weather there?");
    await settle(t, "a", 3);
    const memories = (await t.call("POST", "/ns/a/list/memories?limit=100", {})).body.memories as {
      id: string;
    }[];
    expect(memories.length).toBeGreaterThan(0);
    expect((await t.call("DELETE", "/ns/a/memories", { ids: [memories[0]!.id] })).status).toBe(200);
    // The forget took its source sentence out of a chunk: that rewrite is among the writes checked.
    const [recorded] = await t.engine.context.db
      .prepare("SELECT count(*) AS n FROM forgotten_sentences")
      .all();
    expect(Number((recorded as { n: number }).n), "the forget recorded no sentence").toBeGreaterThan(0);
    expect((await t.call("DELETE", "/ns/a/document", { ids: ["two"] })).body.count).toBe(1);
    expect((await t.call("DELETE", "/ns/b?moveTo=a")).status).toBe(202);
    await add("c", "x", "Carol keeps bees.");
    await settle(t, "c", 1);
    expect((await t.call("DELETE", "/ns/c")).status).toBe(202);
    const names = (await t.call("GET", "/namespaces")).body.namespaces.map(
      (n: { namespace: string }) => n.namespace,
    );
    expect(names).toEqual(["a"]);

    const db = t.engine.context.db;
    const rows = async (sql: string) => (await db.prepare(sql).all()).map((r) => ({ ...r }));
    // Each unit's postings are its text's and context's stems, counted again now (by the
    // tokenizer the index uses, in JavaScript: the same check on every backend).
    const units = (await rows(`
      SELECT s.id AS space, r.unit, r.text, r.context
      FROM (SELECT namespace_id, rowid AS unit, text, context, 'chunks' AS corpus FROM chunks
            UNION ALL SELECT namespace_id, rowid, memory, context, 'memories' FROM memories) r
      JOIN search_spaces s ON s.namespace_id = r.namespace_id AND s.corpus = r.corpus`)) as {
      space: number;
      unit: number;
      text: string | null;
      context: string | null;
    }[];
    const expected = units
      .flatMap(({ space, unit, text, context }) => {
        const [own = [], around = []] = stemTexts([text ?? "", context ?? ""]);
        const terms = new Map<string, [number, number]>();
        for (const [stems, column] of [
          [own, 0],
          [around, 1],
        ] as const) {
          for (const stem of stems) {
            const tf = terms.get(stem) ?? [0, 0];
            tf[column]++;
            terms.set(stem, tf);
          }
        }
        const length = own.length + around.length;
        return [...terms].map(([term, [tf, tfContext]]) => ({
          space,
          term,
          unit,
          tf,
          tf_context: tfContext,
          length,
        }));
      })
      .sort(
        (a, b) => a.space - b.space || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0) || a.unit - b.unit,
      );
    expect(expected.length).toBeGreaterThan(20);
    // A unit's postings: its own (text, and its context unless shared) and its shared context's.
    const postings = `
      SELECT space, term, unit, tf, tf_context, length FROM search_postings
      UNION ALL
      SELECT c.space, c.term, u.unit, 0, c.tf, u.length
      FROM search_context_postings c JOIN search_units u ON u.context = c.context
      WHERE NOT EXISTS (SELECT 1 FROM search_postings p WHERE p.space = c.space AND p.term = c.term AND p.unit = u.unit)`;
    expect(await rows(`${postings} ORDER BY 1, 2, 3`)).toEqual(expected);
    // Shared contexts were made (the memories of a short document share its text as context).
    expect(
      (await rows("SELECT count(*) AS n FROM search_units WHERE context IS NOT NULL"))[0]!.n,
    ).toBeGreaterThan(1);
    expect(
      await rows(`SELECT space, term, units, text_units FROM search_terms WHERE units > 0 ORDER BY 1, 2`),
    ).toEqual(
      await rows(`SELECT space, term, count(*) AS units, sum(CASE WHEN tf > 0 THEN 1 ELSE 0 END) AS text_units FROM (${postings}) x
            GROUP BY 1, 2 ORDER BY 1, 2`),
    );
    // Every shared context counts the units pointing to it; none is left unused or unposted.
    expect(await rows("SELECT id, members FROM search_contexts ORDER BY 1")).toEqual(
      await rows(`SELECT context AS id, count(*) AS members FROM search_units WHERE context IS NOT NULL
            GROUP BY 1 ORDER BY 1`),
    );
    expect(
      await rows(`SELECT count(*) AS n FROM search_context_postings p
            LEFT JOIN search_contexts c ON c.id = p.context WHERE c.id IS NULL`),
    ).toEqual([{ n: 0 }]);
    expect(await rows("SELECT count(*) AS n FROM search_pending")).toEqual([{ n: 0 }]);
    expect(await rows("SELECT count(*) AS n FROM search_terms WHERE units < 0 OR text_units < 0")).toEqual([
      { n: 0 },
    ]);
    expect(
      await rows("SELECT id AS space, units, length FROM search_spaces WHERE units > 0 ORDER BY 1"),
    ).toEqual(
      await rows(
        "SELECT space, count(*) AS units, sum(length) AS length FROM search_units GROUP BY 1 ORDER BY 1",
      ),
    );
    // The namespaces deleted left nothing behind.
    expect(
      await rows(`SELECT count(*) AS n FROM search_spaces s LEFT JOIN namespaces n ON n.id = s.namespace_id
            WHERE n.id IS NULL`),
    ).toEqual([{ n: 0 }]);
  });

  it("searches without writing: a unit written outside a transaction waits for the next write's commit", async () => {
    t = await openTestEngine({ workers: 0 });
    expect((await t.call("POST", "/ns/solo/document", { content: "warm up" })).status).toBe(200);
    const db = t.engine.context.db;
    const ns = (await db.prepare("SELECT id FROM namespaces WHERE name = 'solo'").get()) as { id: string };
    // One statement, autocommitted: nothing indexes it at commit (the store's own writes all run in
    // transactions, whose commits index what they wrote).
    const other = await openDatabase(t.dataDir, testDatabase());
    await insertMemory(db, directMemory(ns.id, "Priya repairs antique clocks."));
    expect(await db.prepare("SELECT count(*) AS n FROM search_pending").get()).toEqual({ n: 1 });
    const search = async () =>
      (
        await t!.call("POST", "/ns/solo/search", { query: "antique clocks", searchMode: "memories" })
      ).body.results.map((r: { memory?: string }) => r.memory);
    const pending = async () => await db.prepare("SELECT count(*) AS n FROM search_pending").get();
    try {
      // A search answers while another connection holds the store's write lock: it takes none, and
      // indexes nothing.
      await transaction(other, async () => {
        expect(await search()).toEqual([]);
        expect(await pending()).toEqual({ n: 1 });
      });
    } finally {
      await other.close();
    }
    // The next write transaction's commit (that one) indexed it.
    expect(await pending()).toEqual({ n: 0 });
    expect(await search()).toContain("Priya repairs antique clocks.");
  });
});
