import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SearchBody } from "../../../src/api/search.js";
import { MemoryClient } from "../../../src/client/index.js";
import { type Engine, openEngine } from "../../../src/engine/index.js";
import { withSourceContext } from "../../../src/engine/memory/dreamer.js";
import { dropRepeats } from "../../../src/engine/search/dedup.js";
import { lexicalSearch } from "../../../src/engine/search/lexical.js";
import { namedPeople, OTHER_PERSON_FACTOR } from "../../../src/engine/search/person.js";
import { search } from "../../../src/engine/search/search.js";
import { queryTerms, STOP_WORDS } from "../../../src/engine/text/terms.js";
import { tempDir } from "../../support/harness.js";
import { TestStore } from "./store.js";

/** Conversations through the real pipeline: chunking, dating, memories, search. */
describe("searching conversations", () => {
  const dir = tempDir("memctx-conversation-");
  const key = "mk_test_conversation_search_key";
  let engine: Engine;
  let client: MemoryClient;

  const SESSION = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, that's cool! What instrument do you play these days?",
    "Caroline: The violin, every evening after work.",
    "Melanie: I finished a painting of a lake sunrise last week.",
    "Caroline: That sounds lovely.",
    "Melanie: Thanks! The kids helped me choose the colors.",
    "Caroline: Kids are the best critics.",
    "Melanie: We are going camping next month.",
  ].join("\n");

  beforeAll(async () => {
    engine = await openEngine({ dataDir: dir.path, apiKey: key, embedder: null, log: () => {} });
    client = new MemoryClient({ apiKey: key, fetch: (req) => engine.fetch(req), maxRetries: 0 });
    const ns = client.ns("friends");
    await ns.documents.add({ id: "s1", content: SESSION, date: "2023-05-08T13:56:00", dreaming: "instant" });
    await ns.documents.waitFor("s1", { until: "memories" });
  });
  afterAll(async () => {
    await client.close();
    await engine.close();
    dir.remove();
  });

  it("stores one chunk per turn whose content is exactly its slice of the text", async () => {
    const doc = await client.ns("friends").documents.get("s1", { include: ["chunks"] });
    const turns = SESSION.split("\n");
    expect(doc.chunks?.map((c) => c.content)).toEqual(turns);
    expect(doc.chunks?.map((c) => c.position)).toEqual(turns.map((_, i) => i));
  });

  it("returns a chunk hit of a dated document as `[day] Speaker: text`", async () => {
    const res = await client.ns("friends").search({ query: "violin", searchMode: "chunks" });
    expect(res.results[0]?.chunk).toBe("[8 May 2023] Caroline: The violin, every evening after work.");
  });

  it("finds the day by its words (the label is indexed)", async () => {
    const res = await client
      .ns("friends")
      .search({ query: "May 2023 violin", searchMode: "chunks", limit: 100 });
    expect(res.results.length).toBe(SESSION.split("\n").length);
    expect(res.results[0]?.chunk).toContain("violin");
  });

  it("finds a turn by the question asked in the turn before it (the context column)", async () => {
    const res = await client.ns("friends").search({ query: "instrument", searchMode: "chunks", limit: 100 });
    const hits = res.results.map((r) => r.chunk);
    // The question itself first, then the answer that never says "instrument".
    expect(hits[0]).toContain("What instrument do you play");
    expect(hits).toContain("[8 May 2023] Caroline: The violin, every evening after work.");
    // Four turns after the question is out of the context's reach.
    expect(hits).not.toContain("[8 May 2023] Caroline: Kids are the best critics.");
  });

  it("dates the memories of a dated conversation", async () => {
    const res = await client.ns("friends").search({ query: "support group", searchMode: "memories" });
    expect(res.results[0]?.memory).toMatch(/support group/);
    expect(res.results[0]?.memory).toMatch(/7 May 2023/);
  });

  it("finds a memory by the turns around its source (the memory's context column)", async () => {
    const res = await client
      .ns("friends")
      .search({ query: "instrument", searchMode: "memories", limit: 100 });
    expect(res.results.map((r) => r.memory)).toContain("Caroline said the violin, every evening after work.");
  });

  it("gives a memory its day, its source turn with three turns each side, and the speaker", () => {
    const text = SESSION;
    const at = text.indexOf("The violin");
    const [fact] = withSourceContext(
      [
        {
          memory: "Caroline plays the violin.",
          isStatic: true,
          subject: "caroline",
          attribute: null,
          eventDate: null,
          source: { start: at, end: at + 10 },
        },
      ],
      text,
      "conversation",
      "2023-05-08T13:56:00",
    );
    const turns = text.split("\n");
    expect(fact?.context).toBe(["[8 May 2023]", ...turns.slice(0, 6)].join("\n"));
    expect(fact?.speaker).toBe("caroline");
  });

  it("says a thing once in hybrid search: a turn and the memory drawn from it are not both returned", async () => {
    const ns = client.ns("friends");
    const query = "painting lake sunrise";
    const chunks = await ns.search({ query, searchMode: "chunks", limit: 100 });
    const memories = await ns.search({ query, searchMode: "memories", limit: 100 });
    const hybrid = await ns.search({ query, limit: 100 });
    const telling = (texts: string[]) => texts.filter((t) => /lake sunrise/.test(t));
    expect(telling(chunks.results.map((r) => r.chunk ?? ""))).toHaveLength(1);
    expect(telling(memories.results.map((r) => r.memory ?? ""))).toHaveLength(1);
    expect(telling(hybrid.results.map((r) => r.memory ?? r.chunk ?? ""))).toHaveLength(1);
    expect(hybrid.results.length).toBeLessThan(chunks.results.length + memories.results.length);
  });
});

describe("the person factor", () => {
  let store: TestStore;
  let ns: string;
  beforeEach(async () => {
    store = await TestStore.open();
    ns = await store.namespace("alice");
  });
  afterEach(async () => await store.close());

  it("knows the namespace's speakers by a prefix of three letters or more", async () => {
    await store.document(ns, ["hello", "hi"], { speakers: ["melanie", "caroline"] });
    expect(await namedPeople(store.db, ns, "What did Mel paint?", STOP_WORDS)).toEqual({
      names: new Set(["melanie"]),
      expansions: ["melanie"],
    });
    expect((await namedPeople(store.db, ns, "What did Caroline paint?", STOP_WORDS)).expansions).toEqual([]);
    expect((await namedPeople(store.db, ns, "What did me paint?", STOP_WORDS)).names.size).toBe(0);
    // Another namespace's speakers are not this one's.
    expect((await namedPeople(store.db, await store.namespace("bob"), "Mel", STOP_WORDS)).names.size).toBe(0);
  });

  it("names every speaker a word starts, up to four, each once however many turns they have", async () => {
    const speakers = ["joanna", "joan", "jon", "jon snow", "jonas", "jonathan", "jones"];
    await store.document(
      ns,
      speakers.flatMap((_, i) => [`turn ${i}`, `again ${i}`]),
      { speakers: speakers.flatMap((s) => [s, s]) },
    );
    // The first four in name order from "jon" ("jones" is a fifth).
    expect(await namedPeople(store.db, ns, "Did Jon call?", STOP_WORDS)).toEqual({
      names: new Set(["jon", "jon snow", "jonas", "jonathan"]),
      expansions: ["jon snow", "jonas", "jonathan"],
    });
    // "joa": joan and joanna; two words of one query, in one read.
    expect((await namedPeople(store.db, ns, "Did Joa meet Jonat?", STOP_WORDS)).expansions).toEqual([
      "joan",
      "joanna",
      "jonathan",
    ]);
  });

  it("multiplies the score of what someone else said by the factor", async () => {
    await store.document(ns, ["pottery pottery pottery and more", "pottery and more"], {
      speakers: ["caroline", "melanie"],
    });
    const terms = queryTerms("pottery");
    const plain = (await lexicalSearch(store.db, "chunks", terms, { namespaceId: ns }, 10)).candidates;
    const person = { names: new Set(["melanie"]), factor: OTHER_PERSON_FACTOR };
    const weighed = (await lexicalSearch(store.db, "chunks", terms, { namespaceId: ns }, 10, { person }))
      .candidates;
    const score = (list: typeof plain, rowid: number) => list.find((c) => c.rowid === rowid)!.bm25;
    const [caroline, melanie] = [plain[0]!.rowid, plain[1]!.rowid];
    expect(score(weighed, caroline)).toBeCloseTo(score(plain, caroline) * OTHER_PERSON_FACTOR, 9);
    expect(score(weighed, melanie)).toBe(score(plain, melanie));
  });

  it("ranks what the named person said first when the query names them", async () => {
    const doc = await store.document(
      ns,
      ["I love pottery, pottery is the best, pottery every day.", "Pottery is fun."],
      {
        speakers: ["caroline", "melanie"],
      },
    );
    const res = await search(
      { db: store.db },
      ns,
      SearchBody.parse({ query: "What does Mel think about pottery?", searchMode: "chunks", threshold: 0 }),
    );
    expect(res.results[0]?.id).toBe(doc.chunkIds[1]);
    const unnamed = await search(
      { db: store.db },
      ns,
      SearchBody.parse({ query: "What about pottery?", searchMode: "chunks", threshold: 0 }),
    );
    expect(unnamed.results[0]?.id).toBe(doc.chunkIds[0]);
  });
});

describe("dedup in hybrid search", () => {
  it("skips a memory whose source turn is already a hit above it", () => {
    const items = dropRepeats([
      {
        corpus: "chunks",
        text: "[8 May 2023] Caroline: I play the violin.",
        documentId: "d",
        start: 0,
        end: 30,
      },
      {
        corpus: "memories",
        text: "Caroline plays an instrument.",
        sources: [{ documentId: "d", start: 10 }],
      },
      {
        corpus: "memories",
        text: "Caroline plays a stringed instrument.",
        sources: [{ documentId: "e", start: 10 }],
      },
    ]);
    expect(items.map((i) => i.text)).toEqual([
      "[8 May 2023] Caroline: I play the violin.",
      "Caroline plays a stringed instrument.",
    ]);
  });

  it("keeps a memory ranked above its source turn, and a memory without a known source", () => {
    const memory = { corpus: "memories" as const, text: "Caroline plays the violin.", sources: [] };
    const items = dropRepeats([
      { corpus: "memories", text: "Melanie paints lakes.", sources: [{ documentId: "d", start: 40 }] },
      { corpus: "chunks", text: "Melanie: I painted a lake.", documentId: "d", start: 35, end: 60 },
      memory,
    ]);
    expect(items).toHaveLength(3);
  });

  it("skips a hit whose content words are mostly in the results already", () => {
    const items = dropRepeats([
      { corpus: "memories", text: "Caroline went to a support group on 7 May 2023." },
      { corpus: "memories", text: "Caroline went to the support group on 7 May 2023!" },
      { corpus: "memories", text: "Caroline went to a concert with Melanie and her kids on 7 May 2023." },
    ]);
    expect(items.map((i) => i.text)).toEqual([
      "Caroline went to a support group on 7 May 2023.",
      "Caroline went to a concert with Melanie and her kids on 7 May 2023.",
    ]);
  });

  it("applies to hybrid search only: chunks and memories modes return every match", async () => {
    const store = await TestStore.open();
    try {
      const ns = await store.namespace("alice");
      await store.memory(ns, "Caroline went to a support group on 7 May 2023.");
      await store.memory(ns, "Caroline went to the support group on 7 May 2023!");
      const run = async (searchMode: "hybrid" | "memories") =>
        await search({ db: store.db }, ns, SearchBody.parse({ query: "support group", searchMode }));
      expect((await run("memories")).results).toHaveLength(2);
      expect((await run("hybrid")).results).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
