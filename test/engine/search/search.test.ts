import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QUERY_MAX_LENGTH } from "../../../src/api/limits.js";
import { SearchBody, SearchResponse } from "../../../src/api/search.js";
import { search } from "../../../src/engine/search/search.js";
import { invalidateVectors } from "../../../src/engine/search/vector.js";
import { ConceptEmbedder, TestStore } from "./store.js";

const CORPUS = [
  "Caroline moved from Sweden to Berlin four years ago with her grandmother's necklace.",
  "Melanie painted a sunrise over the lake in 2022 and hung it in her kitchen.",
  "Caroline went to an LGBTQ support group on 7 May 2023 and found it inspiring.",
  "Melanie ran a charity race for mental health the Sunday before 25 May 2023.",
  "Caroline is researching adoption agencies because she wants to build a family.",
  "The kids loved the camping trip; we roasted marshmallows and watched the stars.",
  "Melanie plays the clarinet and started lessons when she was young.",
  "Caroline gave a talk at a school about her transition and being true to yourself.",
  "We went to the beach last weekend and the children built a huge sandcastle.",
  "Melanie's favourite books are about nature and she reads them to her kids at night.",
  "Caroline's friends threw her a party and she felt loved and accepted.",
  "Pottery class was relaxing; Melanie made a bowl with a blue glaze.",
];

let store: TestStore;
let ns: string;

beforeEach(async () => {
  store = await TestStore.open();
  ns = await store.namespace("alice");
});
afterEach(async () => await store.close());

/** Runs a search the way the route does: the body parsed by the contract first. */
const run = async (body: SearchBody, namespaceId: string | null = ns, embedder?: ConceptEmbedder) => {
  const res = await search({ db: store.db, embedder }, namespaceId, SearchBody.parse(body));
  expect(SearchResponse.safeParse(res).success).toBe(true);
  return res;
};

const addCorpus = async (namespaceId = ns) => {
  for (const text of CORPUS) await store.document(namespaceId, [text]);
};

describe("chunk search", () => {
  it("keeps a relevant query's hits at the default threshold and ranks the answer first", async () => {
    await addCorpus();
    const res = await run({ query: "What did Caroline research about adoption?", searchMode: "chunks" });
    expect(res.results.length).toBeGreaterThan(0);
    expect(res.results[0]!.chunk).toContain("adoption agencies");
    expect(res.results[0]!.similarity).toBeGreaterThanOrEqual(0.3);
    for (const r of res.results) expect(r.similarity).toBeGreaterThanOrEqual(0.3);
  });

  it("returns nothing for an unrelated query at the default threshold", async () => {
    await addCorpus();
    for (const query of [
      "quantum chromodynamics lattice gauge theory",
      "How do I configure a Kubernetes ingress controller?",
      "What is the capital of Australia?",
    ]) {
      const res = await run({ query, searchMode: "chunks" });
      expect(res.results, query).toEqual([]);
    }
  });

  it("drops a row that shares only a word most of the namespace holds", async () => {
    await addCorpus();
    // "Melanie" in most of 2,000 rows says little, here whatever English at large says of the
    // name; "telescope" and "astronomy" are absent.
    for (let i = 0; i < 2000; i++) await store.document(ns, [`Melanie wrote note ${i}.`]);
    const res = await run({ query: "Melanie telescope astronomy", searchMode: "chunks" });
    expect(res.results).toEqual([]);
    const all = await run({ query: "Melanie telescope astronomy", searchMode: "chunks", threshold: 0 });
    expect(all.results.length).toBeGreaterThan(0);
  });

  it("orders hits by similarity, applies the threshold and the limit", async () => {
    await addCorpus();
    const q = { query: "Melanie kids nature books clarinet pottery", searchMode: "chunks" as const };
    const all = await run({ ...q, threshold: 0, limit: 100 });
    const sims = all.results.map((r) => r.similarity);
    expect(sims).toEqual([...sims].sort((a, b) => b - a));
    expect(all.results.length).toBeGreaterThan(3);
    const two = await run({ ...q, threshold: 0, limit: 2 });
    expect(two.results.map((r) => r.id)).toEqual(all.results.slice(0, 2).map((r) => r.id));
    // Just under the third similarity (a threshold lets FTS5 skip common terms; their part is
    // added back with the same formula, equal up to rounding).
    const cut = sims[2]! - 1e-9;
    const high = await run({ ...q, threshold: cut, limit: 100 });
    expect(high.results.every((r) => r.similarity >= cut)).toBe(true);
    expect(high.results.map((r) => r.id)).toEqual(
      all.results.filter((r) => r.similarity >= cut).map((r) => r.id),
    );
    for (const [i, r] of high.results.entries())
      expect(r.similarity).toBeCloseTo(all.results[i]!.similarity, 9);
    for (const s of sims) {
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(1);
    }
  });

  it("keeps one namespace's documents out of another's search", async () => {
    const bob = await store.namespace("bob");
    await addCorpus(bob);
    await store.document(ns, ["Alice keeps bees on her roof in Lisbon."]);
    const res = await run({ query: "Caroline adoption agencies", searchMode: "chunks" });
    expect(res.results).toEqual([]);
    const own = await run({ query: "bees roof Lisbon", searchMode: "chunks" });
    expect(own.results).toHaveLength(1);
    const theirs = await run({ query: "bees roof Lisbon", searchMode: "chunks" }, bob);
    expect(theirs.results).toEqual([]);
  });

  it("still finds a namespace's rows when another namespace holds many better matches", async () => {
    const bob = await store.namespace("bob");
    for (let i = 0; i < 300; i++)
      await store.document(bob, [`Adoption agencies adoption agencies report ${i}`]);
    await store.document(ns, ["Caroline is researching adoption agencies for her family."]);
    const res = await run({ query: "adoption agencies", searchMode: "chunks" });
    expect(res.results).toHaveLength(1);
    expect(res.results[0]!.chunk).toContain("Caroline");
  });

  it("hides chunks of documents that are not done", async () => {
    await store.document(ns, ["Caroline is researching adoption agencies."], { status: "indexing" });
    await store.document(ns, ["Caroline adopted a cat named Oscar from the adoption shelter."], {
      status: "failed",
    });
    // The document still processing is matched in its stored text only, marked pending
    // (search/pending.ts); a failed one not at all.
    const early = (await run({ query: "adoption", searchMode: "chunks" })).results;
    expect(early.map((r) => [r.chunk, r.pending])).toEqual([
      ["Caroline is researching adoption agencies.", true],
    ]);
    await store.document(ns, ["Adoption papers were signed today."]);
    const res = await run({ query: "adoption", searchMode: "chunks" });
    expect(res.results.filter((r) => !r.pending).map((r) => r.chunk)).toEqual([
      "Adoption papers were signed today.",
    ]);
  });

  it("finds nothing in a namespace that does not exist", async () => {
    await addCorpus();
    expect((await run({ query: "Caroline" }, null)).results).toEqual([]);
  });

  it("applies the typed filter to the documents' metadata and fields", async () => {
    await store.document(ns, ["Sprint planning notes: ship search by Friday."], {
      metadata: { team: "core", prio: 1 },
    });
    await store.document(ns, ["Sprint planning notes: fix the flaky tests."], {
      metadata: { team: "web", prio: 2 },
    });
    await store.document(ns, ["Sprint planning notes from Notion."], {
      source: "notion",
      metadata: { team: "core" },
    });
    const q = { query: "sprint planning notes", searchMode: "chunks" as const };
    expect((await run(q)).results).toHaveLength(3);
    const core = await run({
      ...q,
      filter: { field: "team", operator: "eq", value: "CORE", caseSensitive: false },
    });
    expect(core.results).toHaveLength(2);
    const ranked = await run({
      ...q,
      filter: {
        operator: "and",
        operands: [
          { field: "team", operator: "eq", value: "core" },
          { field: "source", operator: "neq", value: "notion" },
        ],
      },
    });
    expect(ranked.results.map((r) => r.chunk)).toEqual(["Sprint planning notes: ship search by Friday."]);
    expect(ranked.results[0]!.metadata).toEqual({ team: "core", prio: 1 });
  });

  it("shapes a chunk hit per the supplement, with its document when asked", async () => {
    const doc = await store.document(ns, ["Caroline is researching adoption agencies."], {
      metadata: { topic: "family" },
      title: "Chat",
      customId: "conv-1",
      date: "2023-05-08",
    });
    const res = await run({ query: "adoption agencies", searchMode: "chunks", include: { documents: true } });
    const hit = res.results[0]!;
    expect(hit).toMatchObject({
      id: doc.chunkIds[0],
      chunk: "Caroline is researching adoption agencies.",
      documentId: doc.id,
      metadata: { topic: "family" },
      system: { createdAt: expect.any(String), updatedAt: expect.any(String) },
      included: {
        document: {
          id: doc.id,
          title: "Chat",
          type: "text",
          url: null,
          source: "api",
          metadata: { topic: "family" },
          date: "2023-05-08",
        },
      },
    });
    expect(hit.memory).toBeUndefined();
    expect(typeof res.searchTime).toBe("number");
  });
});

describe("memory search", () => {
  it("searches live, latest memories; include.forgotten adds forgotten ones", async () => {
    const old = await store.memory(ns, "Caroline lives in Stockholm.", { isLatest: false });
    const latest = await store.memory(ns, "Caroline lives in Berlin.", { parentMemoryId: old, version: 2 });
    await store.relate(latest, old, "updates");
    const forgotten = await store.memory(ns, "Caroline lives in a flat near Berlin zoo.", {
      isForgotten: true,
    });
    const expired = await store.memory(ns, "Caroline lives with a roommate in Berlin.", {
      forgetAfter: "2001-01-01",
    });
    const future = await store.memory(ns, "Caroline lives close to Berlin's Tiergarten park.", {
      forgetAfter: "2999-01-01",
    });
    const q = { query: "Where does Caroline live?", searchMode: "memories" as const, threshold: 0 };
    const res = await run(q);
    // The superseded version is no hit of its own: its memory answers once, as the latest version.
    expect(res.results.map((r) => r.id).sort()).toEqual([latest, future].sort());
    for (const r of res.results) expect(r).toMatchObject({ isLatest: true, isInference: false });
    const withForgotten = await run({ ...q, include: { forgotten: true } });
    expect(withForgotten.results.map((r) => r.id).sort()).toEqual(
      [latest, forgotten, expired, future].sort(),
    );
  });

  it("answers a question in a superseded version's words with the latest version, ranked lower", async () => {
    const v1 = await store.memory(ns, "Melanie drives a red Volvo.", { isLatest: false });
    const v2 = await store.memory(ns, "Melanie drives an electric scooter.", {
      isLatest: false,
      parentMemoryId: v1,
      version: 2,
    });
    await store.relate(v2, v1, "updates");
    const v3 = await store.memory(ns, "Melanie rides a bicycle to work.", { parentMemoryId: v2, version: 3 });
    await store.relate(v3, v2, "updates");
    const other = await store.memory(ns, "Melanie bought a red Volvo toy for her son.");
    for (const mode of ["memories", "hybrid"] as const) {
      const res = await run({ query: "red Volvo", searchMode: mode, threshold: 0 });
      const ids = res.results.map((r) => r.id);
      expect(ids, mode).not.toContain(v1);
      expect(ids, mode).not.toContain(v2);
      const hit = res.results.find((r) => r.id === v3);
      expect(hit, mode).toMatchObject({ memory: "Melanie rides a bicycle to work.", isLatest: true });
      // A current memory in the question's own words ranks above one found through an old version's.
      expect(ids.indexOf(other), mode).toBeLessThan(ids.indexOf(v3));
      expect(
        ids.filter((id) => id === v3),
        mode,
      ).toHaveLength(1);
    }
    // History stays one include away.
    const withRelated = await run({ query: "red Volvo", searchMode: "memories", include: { related: true } });
    expect(withRelated.results.find((r) => r.id === v3)?.included?.related?.parents.map((p) => p.id)).toEqual(
      [v2, v1],
    );
  });

  it("finds nothing through an older version once the latest is forgotten or filtered out", async () => {
    const v1 = await store.memory(ns, "Caroline works at a bakery in Malmo.", {
      isLatest: false,
      metadata: { topic: "work" },
    });
    const v2 = await store.memory(ns, "Caroline works at a bookshop.", {
      parentMemoryId: v1,
      version: 2,
      isForgotten: true,
      metadata: { topic: "work" },
    });
    await store.relate(v2, v1, "updates");
    const w1 = await store.memory(ns, "Caroline paints with a bakery's flour sacks.", {
      isLatest: false,
      metadata: { topic: "art" },
    });
    const w2 = await store.memory(ns, "Caroline paints on canvas.", {
      parentMemoryId: w1,
      version: 2,
      metadata: { topic: "hobby" },
    });
    await store.relate(w2, w1, "updates");
    const res = await run({ query: "bakery", searchMode: "memories", threshold: 0 });
    expect(res.results.map((r) => r.id)).toEqual([w2]);
    const filtered = await run({
      query: "bakery",
      searchMode: "memories",
      threshold: 0,
      filter: { field: "topic", operator: "eq", value: "art" },
    });
    expect(filtered.results).toEqual([]);
  });

  it("answers a question about where someone lives, works or who they married with the fact told in other words", async () => {
    // A user's own namespace: "The user" opens nearly every memory.
    const facts = [
      "The user is vegetarian.",
      "The user prefers dark roast coffee.",
      "The user moved to Braga in 2025.",
      "The user was hired by Globex as a data engineer.",
      "The user got engaged to Sam last June.",
      "The user drinks oat milk.",
      "The user plays tennis on Sundays.",
    ];
    const ids = new Map<string, string>();
    for (const f of facts) ids.set(f, await store.memory(ns, f));
    for (const [query, answer] of [
      ["where does the user live?", "The user moved to Braga in 2025."],
      ["Where does the user reside these days?", "The user moved to Braga in 2025."],
      ["what is the user's job?", "The user was hired by Globex as a data engineer."],
      ["Is the user married?", "The user got engaged to Sam last June."],
    ] as const) {
      for (const searchMode of ["memories", "hybrid"] as const) {
        const res = await run({ query, searchMode, threshold: 0 });
        expect(res.results[0]?.id, `${query} (${searchMode})`).toBe(ids.get(answer));
      }
    }
  });

  it("adds parents, children and siblings with include.related", async () => {
    const v1 = await store.memory(ns, "Melanie works as a nurse.", { isLatest: false });
    const v2 = await store.memory(ns, "Melanie works as a head nurse at the city hospital.", {
      parentMemoryId: v1,
      version: 2,
    });
    await store.relate(v2, v1, "updates");
    const extra = await store.memory(ns, "Melanie's hospital shifts are at night.");
    await store.relate(extra, v2, "extends");
    const gone = await store.memory(ns, "Melanie hates hospitals.", { isForgotten: true });
    await store.relate(gone, v2, "extends");
    const res = await run({
      query: "head nurse hospital",
      searchMode: "memories",
      include: { related: true },
    });
    const hit = res.results.find((r) => r.id === v2)!;
    expect(hit.included?.related).toEqual({
      parents: [{ id: v1, memory: "Melanie works as a nurse." }],
      children: [],
      siblings: [{ id: extra, memory: "Melanie's hospital shifts are at night." }],
    });
  });

  it("hybrid answers with chunks while the namespace has no memory, then with both", async () => {
    await addCorpus();
    const q = { query: "Caroline adoption agencies" };
    const before = await run(q);
    expect(before.results.length).toBeGreaterThan(0);
    expect(before.results.every((r) => r.chunk !== undefined)).toBe(true);
    const mem = await store.memory(ns, "Caroline is researching adoption agencies to start a family.");
    const after = await run(q);
    expect(after.results.some((r) => r.id === mem && r.memory !== undefined)).toBe(true);
    expect(after.results.some((r) => r.chunk !== undefined)).toBe(true);
    const sims = after.results.map((r) => r.similarity);
    expect(sims).toEqual([...sims].sort((a, b) => b - a));
  });

  it("filters memories by their metadata and by their source document", async () => {
    const doc = await store.document(ns, ["x"], { source: "notion" });
    await store.memory(ns, "The launch is on Monday.", {
      metadata: { project: "apollo" },
      documentId: doc.id,
    });
    await store.memory(ns, "The launch moved to Tuesday.", { metadata: { project: "gemini" } });
    const q = { query: "launch", searchMode: "memories" as const };
    expect((await run(q)).results).toHaveLength(2);
    const apollo = await run({ ...q, filter: { field: "project", operator: "eq", value: "apollo" } });
    expect(apollo.results.map((r) => r.memory)).toEqual(["The launch is on Monday."]);
    const notion = await run({ ...q, filter: { field: "source", operator: "eq", value: "notion" } });
    expect(notion.results.map((r) => r.memory)).toEqual(["The launch is on Monday."]);
  });
});

describe("hostile queries", () => {
  const HOSTILE = [
    '"',
    '""',
    "'",
    "AND",
    "OR NOT AND",
    "-",
    "*",
    "caroline*",
    "NEAR(caroline melanie, 2)",
    'caroline" OR "x',
    "content:caroline",
    "^caroline",
    "(((",
    ")",
    "{col1 col2}: x",
    "🙂🚀",
    "北京 東京 서울",
    "ça naïve résumé",
    "\u0000\u0001",
    // The longest query the contract takes.
    "a".repeat(QUERY_MAX_LENGTH),
    Array.from({ length: 500 }, (_, i) => `word${i}`).join(" "),
    "the of and",
    "what",
  ];

  it("never throws on FTS5 syntax, punctuation or unicode, in every mode", async () => {
    await addCorpus();
    await store.memory(ns, "Caroline moved to Berlin.");
    for (const query of HOSTILE) {
      for (const searchMode of ["chunks", "memories", "hybrid"] as const) {
        for (const rerank of ["none", "order", "aggregate"] as const) {
          const res = await run({ query, searchMode, rerank, threshold: 0 });
          expect(Array.isArray(res.results), query).toBe(true);
        }
      }
    }
  });

  it("still finds what the words in a messy query name", async () => {
    await addCorpus();
    const res = await run({ query: 'NEAR("Caroline" -adoption* AND agencies)', searchMode: "chunks" });
    expect(res.results[0]?.chunk).toContain("adoption agencies");
  });
});

describe("rerank", () => {
  it("order: lifts the row holding the query's terms together, and stays ordered", async () => {
    await store.document(ns, [
      "Caroline spoke about many things: adoption was one, and later, far away, agencies came up.",
    ]);
    await store.document(ns, ["Caroline contacted adoption agencies in Berlin."]);
    const plain = await run({ query: "Caroline adoption agencies", searchMode: "chunks", threshold: 0 });
    const ordered = await run({
      query: "Caroline adoption agencies",
      searchMode: "chunks",
      threshold: 0,
      rerank: "order",
    });
    expect(ordered.results[0]!.chunk).toBe("Caroline contacted adoption agencies in Berlin.");
    const sims = ordered.results.map((r) => r.similarity);
    expect(sims).toEqual([...sims].sort((a, b) => b - a));
    // Re-scoring only raises.
    for (const r of ordered.results) {
      const before = plain.results.find((p) => p.id === r.id)!;
      expect(r.similarity).toBeGreaterThanOrEqual(before.similarity);
    }
  });

  it("aggregate: merges chunks of one document into one hit", async () => {
    const doc = await store.document(ns, [
      "Melanie signed up for pottery class.",
      "The weather was grey all week.",
      "At pottery class Melanie glazed a bowl blue.",
    ]);
    await store.document(ns, ["Pottery is older than writing."]);
    const res = await run({
      query: "Melanie pottery",
      searchMode: "chunks",
      threshold: 0,
      rerank: "aggregate",
    });
    const hits = res.results.filter((r) => r.documentId === doc.id);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.chunk).toBe(
      "Melanie signed up for pottery class.\n\nAt pottery class Melanie glazed a bowl blue.",
    );
    expect(res.results).toHaveLength(2);
  });

  it("accepts true and false as order and none", () => {
    expect(SearchBody.parse({ query: "x", rerank: true }).rerank).toBe("order");
    expect(SearchBody.parse({ query: "x", rerank: false }).rerank).toBe("none");
  });
});

describe("vector search", () => {
  it("finds a chunk by meaning when no word is shared, with an embedder", async () => {
    const embedder = new ConceptEmbedder();
    const texts = ["I bought a used car last spring.", "My dog loves the beach.", "Taxes are due in April."];
    for (const t of texts)
      await store.document(ns, [t], {
        embedder: { model: embedder.model, vectors: [embedder.embedSync(t)] },
      });
    const lexicalOnly = await run({ query: "zorbmobile", searchMode: "chunks" });
    expect(lexicalOnly.results).toEqual([]);
    const res = await run({ query: "zorbmobile", searchMode: "chunks" }, ns, embedder);
    expect(res.results[0]?.chunk).toBe("I bought a used car last spring.");
    expect(res.results.every((r) => r.similarity >= 0.3)).toBe(true);
  });

  it("raises rows that both signals find above rows only one finds", async () => {
    const embedder = new ConceptEmbedder();
    const texts = ["puppy training tips", "dog training tips", "training schedule for marathon"];
    for (const t of texts)
      await store.document(ns, [t], {
        embedder: { model: embedder.model, vectors: [embedder.embedSync(t)] },
      });
    const res = await run({ query: "dog training", searchMode: "chunks", threshold: 0 }, ns, embedder);
    expect(res.results[0]!.chunk).toBe("dog training tips");
    expect(res.results.map((r) => r.chunk)).toContain("puppy training tips");
  });

  it("sees vectors written after the first search (the packed copy is rebuilt)", async () => {
    const embedder = new ConceptEmbedder();
    const add = (t: string) =>
      store.document(ns, [t], { embedder: { model: embedder.model, vectors: [embedder.embedSync(t)] } });
    await add("The physician prescribed rest.");
    expect((await run({ query: "doctor", searchMode: "chunks" }, ns, embedder)).results).toHaveLength(1);
    await add("Our medic checked the wound.");
    expect((await run({ query: "doctor", searchMode: "chunks" }, ns, embedder)).results).toHaveLength(2);
    invalidateVectors(store.db);
    expect((await run({ query: "doctor", searchMode: "chunks" }, ns, embedder)).results).toHaveLength(2);
  });

  it("keeps vector hits of other namespaces and unfinished documents out", async () => {
    const embedder = new ConceptEmbedder();
    const other = await store.namespace("other");
    const v = (t: string) => ({ model: embedder.model, vectors: [embedder.embedSync(t)] });
    await store.document(other, ["a red sedan"], { embedder: v("a red sedan") });
    await store.document(ns, ["a blue vehicle"], { embedder: v("a blue vehicle"), status: "embedding" });
    expect((await run({ query: "car", searchMode: "chunks" }, ns, embedder)).results).toEqual([]);
  });

  it("searches lexically when the embedder fails", async () => {
    await addCorpus();
    const broken = new ConceptEmbedder();
    broken.embed = async () => {
      throw new Error("connection refused");
    };
    const logs: string[] = [];
    const res = await search(
      { db: store.db, embedder: broken, log: (m) => logs.push(m) },
      ns,
      SearchBody.parse({ query: "adoption agencies" }),
    );
    expect(res.results[0]?.chunk).toContain("adoption agencies");
    expect(logs.join("\n")).toContain("connection refused");
  });
});
