import { afterEach, describe, expect, it } from "vitest";
import type { Embedder } from "../../../src/engine/models/embedder.js";
import {
  WORD_VECTORS_MODEL,
  WordIndex,
  WordVectorEmbedder,
} from "../../../src/engine/models/word-vectors.js";
import { tableWords } from "../../../src/engine/text/background.js";
import { eventually } from "../../support/wait.js";
import { openTestEngine, type TestEngine } from "../memory/harness.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const OTHER_TURNS = [
  "John: I cooked a big pot of pasta for dinner last night.",
  "John: My sister moved to Denver for her new job.",
  "John: I finally fixed the leaking kitchen sink.",
  "John: We adopted a rescue dog named Biscuit.",
].join("\n");

/**
 * Two turns that BM25 cannot tell apart for the query (the same words but one, of the same
 * length), the one about the library stored first: only the meaning of "hospital" against
 * "doctor" can put it first (WordNet relates the two by no synonym or kind: its expansions of
 * the query, search/expand.ts, leave the tie).
 */
async function ingest(embedder: Embedder | null) {
  t = await openTestEngine({ workers: 1, embedder });
  for (const [id, content] of [
    // Other memories, so that "arts" is a rare word (BM25 gives a word in most rows no weight).
    ["other", OTHER_TURNS],
    ["library", "John: I went to the library on Main Street yesterday."],
    ["hospital", "John: I went to the hospital on Main Street yesterday."],
  ] as const) {
    const res = await t.call("POST", "/ns/john/document", { id, content, dreaming: "instant" });
    expect(res.status).toBe(200);
    await eventually(async () => {
      const doc = await t!.call("GET", `/ns/john/document/${id}`);
      return doc.body.system?.status === "done" ? true : undefined;
    }, `document ${id} done`);
  }
  const found = await t.call("POST", "/ns/john/search", {
    query: "When did John see a doctor on Main Street?",
    searchMode: "memories",
  });
  expect(found.status).toBe(200);
  return found.body.results as { memory: string; similarity: number }[];
}

describe("search with the built-in word vectors", () => {
  it("ranks the memory that means what the query asks first when the words tie", async () => {
    const results = await ingest(new WordVectorEmbedder());
    expect(results.length).toBeGreaterThanOrEqual(2);
    expect(results[0]!.memory).toMatch(/hospital/);
    expect(results[1]!.memory).toMatch(/library/);
    expect(results[0]!.similarity).toBeGreaterThan(results[1]!.similarity);

    // Memories carry vectors of the model; chunks none (an average blurs over a passage).
    const db = t!.engine.context.db;
    const count = async (sql: string) => ((await db.prepare(sql).get()) as { n: number }).n;
    expect(
      await count(`SELECT count(*) AS n FROM memory_vectors WHERE model = '${WORD_VECTORS_MODEL}'`),
    ).toBe(await count("SELECT count(*) AS n FROM memories"));
    expect(await count("SELECT count(*) AS n FROM chunk_vectors")).toBe(0);
  });

  it("without them the tie goes to the older memory (the control)", async () => {
    const results = await ingest(null);
    expect(results[0]!.memory).toMatch(/library/);
    expect(results[0]!.similarity).toBeCloseTo(results[1]!.similarity, 6);
  });

  it("adds no hit that lexical search did not find at the default threshold", async () => {
    t = await openTestEngine({ workers: 1, embedder: new WordVectorEmbedder() });
    await t.call("POST", "/ns/john/document", {
      id: "hospital",
      content: `${OTHER_TURNS}\nJohn: I spent the night at the hospital.`,
      dreaming: "instant",
    });
    await eventually(async () => {
      const doc = await t!.call("GET", "/ns/john/document/hospital");
      return doc.body.system?.status === "done" ? true : undefined;
    }, "document done");
    const res = await t.call("POST", "/ns/john/search", { query: "doctor", searchMode: "memories" });
    expect(res.body.results).toEqual([]);
    // A caller who asks for weaker matches gets the vector's find, scored under its weight.
    const loose = await t.call("POST", "/ns/john/search", {
      query: "doctor",
      searchMode: "memories",
      threshold: 0,
    });
    expect(loose.body.results.length).toBeGreaterThan(0);
    expect(loose.body.results[0].memory).toMatch(/hospital/);
    expect(loose.body.results[0].similarity).toBeLessThanOrEqual(0.3);
  });
});

describe("search with WordNet's expansions of the query", () => {
  it("finds a kind of what the query names without vectors, at the default threshold", async () => {
    t = await openTestEngine({ workers: 1, embedder: null });
    await t.call("POST", "/ns/john/document", {
      id: "tkd",
      content: `${OTHER_TURNS}\nJohn: I practise taekwondo every Monday.`,
      dreaming: "instant",
    });
    await eventually(async () => {
      const doc = await t!.call("GET", "/ns/john/document/tkd");
      return doc.body.system?.status === "done" ? true : undefined;
    }, "document done");
    const res = await t.call("POST", "/ns/john/search", { query: "martial arts", searchMode: "memories" });
    expect(res.body.results[0]?.memory).toMatch(/taekwondo/);
    // A query WordNet relates to nothing here still finds nothing.
    const none = await t.call("POST", "/ns/john/search", { query: "quantum chromodynamics" });
    expect(none.body.results).toEqual([]);
  });
});

describe("the word index (word -> row of the table)", () => {
  it("finds every word of the shipped table at the row a Map of its words gives, and nothing else", () => {
    const words = tableWords();
    const map = new Map(words.map((w, i) => [w, i]));
    const index = new WordIndex(Buffer.from(words.join("\n")));
    expect(index.size).toBe(words.length);
    for (const w of words) expect(index.get(w)).toBe(map.get(w));
    for (const w of ["", "zzqqx", `${words[0]}s`, words[0]!.slice(0, -1), "é"])
      expect(index.get(w)).toBe(map.get(w));
  });

  it("gives a word listed twice its last row, and reads words beyond ASCII", () => {
    const words = ["tea", "café", "tea", "naïve", ""];
    const index = new WordIndex(Buffer.from(words.join("\n")));
    expect(index.get("tea")).toBe(2);
    expect(index.get("café")).toBe(1);
    expect(index.get("naïve")).toBe(3);
    expect(index.get("")).toBe(4);
    expect(index.get("cafe")).toBeUndefined();
  });
});
