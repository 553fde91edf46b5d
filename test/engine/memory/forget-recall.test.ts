import { describe, expect, it } from "vitest";
import { OfflineExtractor } from "../../../src/engine/memory/extract/offline.js";
import type { Extractor } from "../../../src/engine/memory/extract/types.js";
import { sweepExpired } from "../../../src/engine/memory/forget.js";
import type { Embedder } from "../../../src/engine/models/embedder.js";
import { type Db, openDatabase } from "../../../src/engine/store/db.js";
import { serverPerFile, testDatabase } from "../../support/harness.js";
import { until } from "../../support/wait.js";
import { openTestEngine } from "./harness.js";

/**
 * Forget means gone from recall: after a memory is forgotten, in whichever way, no search path
 * (v5 hybrid, memories and chunks, legacy v4 search, document titles) shows the sentence it came
 * from, while the rest of its document stays findable and the document itself stays as stored.
 * A real server on 127.0.0.1 with the offline extractor; runs on PostgreSQL too.
 */

const { server, dir } = serverPerFile({ workers: 1 });

// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field
async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await server.call(method, path, body === undefined ? {} : { body });
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text}`).toBe(200);
  return text ? JSON.parse(text) : undefined;
}

/** Adds a document (instant dreaming) and waits until its memories are extracted. */
async function addDocument(ns: string, id: string, content: string): Promise<void> {
  await api("POST", `/ns/${ns}/document`, { id, content, dreaming: "instant" });
  await until(
    () => api("GET", `/ns/${ns}/document/${id}`),
    (d) => d.system.status === "done" && d.system.dreamingStatus === "done",
  );
}

async function memories(
  ns: string,
  forgotten = false,
): Promise<{ id: string; memory: string; isForgotten: boolean }[]> {
  return (await api("POST", `/ns/${ns}/list/memories?limit=100`, { include: { forgotten } })).memories;
}

/** The live memory mentioning `word` (the extractor's wording aside). */
async function memoryAbout(ns: string, word: RegExp): Promise<{ id: string; memory: string }> {
  const found = (await memories(ns)).filter((m) => word.test(m.memory));
  expect(found.length, `a memory matching ${word}`).toBeGreaterThan(0);
  return found[0]!;
}

interface Hit {
  text: string;
  similarity: number;
  title: string | null;
}

/** Every text a v5 search shows: memories, chunks and their documents' titles. */
async function search(ns: string, query: string, searchMode: string, threshold = 0): Promise<Hit[]> {
  const { results } = await api("POST", `/ns/${ns}/search`, {
    query,
    searchMode,
    threshold,
    limit: 50,
    include: { documents: true, related: true },
  });
  // biome-ignore lint/suspicious/noExplicitAny: a hit read field by field
  return results.map((h: any) => ({
    text: [
      h.memory ?? h.chunk,
      ...(h.included?.related
        ? Object.values(h.included.related)
            .flat()
            .map((r) => (r as { memory: string }).memory)
        : []),
    ].join(" | "),
    similarity: h.similarity,
    title: h.included?.document?.title ?? null,
  }));
}

/** The same through legacy v4 search. */
async function searchV4(ns: string, q: string, searchMode: string): Promise<Hit[]> {
  const { results } = await api("POST", "/v4/search", {
    q,
    containerTag: ns,
    searchMode,
    threshold: 0,
    limit: 50,
    include: { documents: true, relatedMemories: true },
  });
  // biome-ignore lint/suspicious/noExplicitAny: a hit read field by field
  return results.map((h: any) => ({
    text: h.memory ?? h.chunk,
    similarity: h.similarity,
    title: h.included?.document?.title ?? null,
  }));
}

/** Every search path, each mode, v5 and v4: what they show, and whether they matched anything. */
async function recall(ns: string, query: string): Promise<Hit[]> {
  const out: Hit[] = [];
  for (const mode of ["hybrid", "memories", "chunks"]) {
    out.push(...(await search(ns, query, mode)), ...(await searchV4(ns, query, mode)));
  }
  return out;
}

/** Nothing recalled says `word`: no hit's text, no title. */
function saysNothingOf(hits: Hit[], word: RegExp): void {
  for (const h of hits) {
    expect(h.text, "a hit shows the forgotten sentence").not.toMatch(word);
    expect(h.title ?? "", "a title shows the forgotten sentence").not.toMatch(word);
  }
}

const matched = (hits: Hit[]) => hits.filter((h) => h.similarity > 0);

describe("forget means gone from recall", () => {
  it("forgotten by id (v5): its sentence leaves every search path, the rest of the passage stays, the document stays", async () => {
    const content = [
      "Kitchen notes for the week.",
      "I prefer dark roast coffee and my sister Maya lives in Lisbon. The build server runs on Fridays.",
      "The boiler was serviced in March.",
    ].join("\n");
    await addDocument("kitchen", "kitchen-notes", content);
    const coffee = await memoryAbout("kitchen", /coffee/);
    expect(saysAnything(await recall("kitchen", "dark roast coffee"), /roast/)).toBe(true);

    const res = await api("DELETE", "/ns/kitchen/memories", { ids: [coffee.id] });
    expect(res.count).toBe(1);

    const after = await recall("kitchen", "dark roast coffee");
    saysNothingOf(after, /roast|coffee/i);
    // The chunk's other sentences still match, shown without the forgotten one.
    const build = matched(await search("kitchen", "build server Fridays", "chunks"));
    expect(build.length).toBeGreaterThan(0);
    expect(build[0]!.text).toMatch(/build server runs on Fridays/);
    expect(build[0]!.text).toMatch(/boiler/);
    saysNothingOf(build, /coffee/);
    // The document is the user's: its content is as sent.
    expect((await api("GET", "/ns/kitchen/document/kitchen-notes")).content).toBe(content);
    // The memory is still readable as forgotten.
    const forgotten = (await memories("kitchen", true)).find((m) => m.id === coffee.id);
    expect(forgotten?.isForgotten).toBe(true);
  });

  it("forgotten through v4 DELETE: a title made from the sentence no longer shows it", async () => {
    await addDocument(
      "release",
      "release-plan",
      "Owner: Tomasz.\nThe quarterly release ships on Monday after the code freeze.\nRollback drills happen every sprint.",
    );
    const owner = await memoryAbout("release", /Tomasz/);
    const before = await search("release", "quarterly release Monday", "chunks");
    expect(before[0]?.title).toMatch(/Tomasz/);

    await api("DELETE", "/v4/memories", { containerTag: "release", id: owner.id });

    saysNothingOf(await recall("release", "Tomasz"), /Tomasz/);
    const release = matched(await search("release", "quarterly release Monday", "hybrid"));
    expect(release.some((h) => /quarterly release ships on Monday/.test(h.text))).toBe(true);
    saysNothingOf(release, /Tomasz/);
  });

  it("forgotten: a title made from the sentence leaves every place a document is shown, and so does the memory unless asked for", async () => {
    await addDocument(
      "titles",
      "titles-plan",
      "Owner: Ingrid.\nThe harbour crane inspection is due in April.\nSpare cables sit in shed four.",
    );
    const owner = await memoryAbout("titles", /Ingrid/);
    const shown = async (): Promise<{ where: string; title: unknown }[]> => {
      const read = await api("GET", "/ns/titles/document/titles-plan?include=memories");
      const listed = (await api("POST", "/ns/titles/list/documents", {})).documents[0];
      const v3 = await api("GET", `/v3/documents/${read.id}`);
      const v3List = (await api("POST", "/v3/documents/list", { containerTags: ["titles"] })).memories[0];
      const sources = await Promise.all(
        (await memories("titles")).map(
          async (m) => (await api("GET", `/ns/titles/memories/${m.id}?include=documents`)).included?.document,
        ),
      );
      return [
        { where: "GET document", title: read.title },
        { where: "list documents", title: listed.title },
        { where: "v3 GET", title: v3.title },
        { where: "v3 list", title: v3List.title },
        ...sources.map((d) => ({ where: "memory's document", title: d?.title })),
      ];
    };
    for (const s of await shown()) expect(s.title, s.where).toMatch(/Ingrid/);

    await api("DELETE", "/ns/titles/memories", { ids: [owner.id] });

    for (const s of await shown()) expect(String(s.title ?? ""), s.where).not.toMatch(/Ingrid/);
    const read = await api("GET", "/ns/titles/document/titles-plan?include=memories");
    expect(read.memories.map((m: { id: string }) => m.id)).not.toContain(owner.id);
    expect(read.memories.length, "the document's other memories").toBeGreaterThan(0);
    // A forgotten memory is still there for whoever asks for forgotten ones.
    expect((await memories("titles", true)).map((m) => m.id)).toContain(owner.id);
  });

  it("forgotten by meaning in a conversation: the turn goes, and the turns around it no longer match it", async () => {
    await addDocument(
      "chat",
      "chat-1",
      [
        "Priya: I am allergic to shellfish, so no paella for me.",
        "Sam: Good to know, I will cook something else.",
        "Priya: My dentist appointment moved to Thursday afternoon.",
        "Sam: Then dinner on Friday works better.",
      ].join("\n"),
    );
    expect(matched(await search("chat", "shellfish", "chunks")).length).toBeGreaterThan(1);

    const res = await api("DELETE", "/ns/chat/memories/semantic", { query: "allergic to shellfish" });
    expect(res.count).toBeGreaterThan(0);

    saysNothingOf(await recall("chat", "allergic to shellfish paella"), /shellfish|paella/);
    // Neighbouring turns indexed the turn as their context: they no longer match its words.
    expect(matched(await search("chat", "shellfish paella", "chunks"))).toEqual([]);
    const dentist = matched(await search("chat", "dentist appointment", "chunks"));
    expect(dentist[0]?.text).toMatch(/dentist appointment moved to Thursday/);
  });

  it("a sentence with LIKE's wildcards (% and _) leaves the turns around it too", async () => {
    await addDocument(
      "shop",
      "shop-chat",
      [
        "Lena: My voucher code is SAVE_20% at the bakery.",
        "Omar: Nice one.",
        "Lena: The bakery opens at eight on weekdays.",
      ].join("\n"),
    );
    const voucher = await memoryAbout("shop", /voucher/);
    await api("DELETE", "/ns/shop/memories", { ids: [voucher.id] });
    saysNothingOf(await recall("shop", "voucher code SAVE_20"), /voucher|SAVE_20/);
    expect(matched(await search("shop", "voucher", "chunks"))).toEqual([]);
    expect(matched(await search("shop", "bakery opens weekdays", "chunks"))[0]?.text).toMatch(
      /opens at eight/,
    );
  });

  it("forgotten through v4 forget-matching, and kept forgotten when the same document is sent again", async () => {
    const content = [
      "Garden log.",
      "The spare house key is under the blue flowerpot.",
      "The tomatoes need water twice a week in July.",
    ].join("\n");
    await addDocument("garden", "garden-log", content);
    const res = await api("POST", "/v4/memories/forget-matching", {
      containerTag: "garden",
      query: "spare house key flowerpot",
      threshold: 0.3,
    });
    expect(res.count).toBeGreaterThan(0);
    saysNothingOf(await recall("garden", "spare house key"), /flowerpot|house key/);

    // Sent again with one more line: the new line is found, the forgotten sentence stays out.
    await addDocument("garden", "garden-log", `${content}\nThe compost bin is emptied in October.`);
    saysNothingOf(await recall("garden", "spare house key under the flowerpot"), /flowerpot|house key/);
    expect((await memories("garden")).some((m) => /flowerpot/.test(m.memory))).toBe(false);
    const compost = matched(await search("garden", "compost bin October", "chunks"));
    expect(compost[0]?.text).toMatch(/compost bin is emptied in October/);
    expect((await api("GET", "/ns/garden/document/garden-log")).content).toMatch(/blue flowerpot/);
  });

  it("forgetting the latest version forgets the earlier ones: no version of the fact is recalled", async () => {
    await addDocument("home", "home-1", "I live in Lisbon.\nThe tram stops at the corner.");
    await addDocument(
      "home",
      "home-2",
      "Actually I live in Madrid now, not Lisbon anymore.\nMy bike is blue.",
    );
    const madrid = await memoryAbout("home", /Madrid/);
    const read = await api("GET", `/ns/home/memories/${madrid.id}`);
    expect(read.version, "the correction is a new version").toBe(2);
    // Before the forget, the old value still finds the memory (as its current version).
    expect(saysAnything(await recall("home", "Lisbon"), /Madrid/)).toBe(true);

    const res = await api("DELETE", "/ns/home/memories", { ids: [madrid.id] });
    expect(res.matches).toEqual([{ id: madrid.id, memory: madrid.memory }]);

    saysNothingOf(await recall("home", "Lisbon"), /Lisbon|Madrid/);
    saysNothingOf(await recall("home", "where does the user live"), /Lisbon|Madrid/);
    const earlier = await api("GET", `/ns/home/memories/${read.parentMemoryId}`);
    expect(earlier).toMatchObject({ isForgotten: true });
    expect((await memories("home")).filter((m) => /Lisbon|Madrid/.test(m.memory))).toEqual([]);
    // The documents' other sentences stay findable.
    expect(matched(await search("home", "tram corner", "chunks"))[0]?.text).toMatch(/tram stops/);
    expect(matched(await search("home", "bike blue", "chunks"))[0]?.text).toMatch(/bike is blue/);
  });

  it("an edited memory's old wording leaves its source passage too; the new version is recalled", async () => {
    await addDocument(
      "ops",
      "ops-notes",
      "The deploy key rotates every 30 days.\nThe staging server runs in Frankfurt.",
    );
    const key = await memoryAbout("ops", /30 days/);
    expect(saysAnything(await recall("ops", "deploy key rotates"), /30 days/)).toBe(true);

    const edited = await api("PATCH", "/v4/memories", {
      containerTag: "ops",
      id: key.id,
      newContent: "The deploy key rotates every 14 days.",
    });
    expect(edited).toMatchObject({ version: 2, memory: "The deploy key rotates every 14 days." });

    const after = await recall("ops", "deploy key rotates");
    // Memories show the new version; passages and hits no longer show the old wording.
    for (const h of after)
      expect(h.text.replace(/ \| .*/, ""), "a hit shows the old wording").not.toMatch(/30 days/);
    expect(saysAnything(after, /14 days/)).toBe(true);
    // The old version is history, readable and not forgotten.
    expect(await api("GET", `/ns/ops/memories/${key.id}`)).toMatchObject({
      isLatest: false,
      isForgotten: false,
    });
    expect(matched(await search("ops", "staging server Frankfurt", "chunks"))[0]?.text).toMatch(/Frankfurt/);
  });

  it("past its forget_after: the expiry sweep takes the sentence out too", async () => {
    await addDocument(
      "trip",
      "trip-notes",
      // A room, not a door code: a code is a secret, never stored (text/secrets.ts).
      "The hotel room number is 4471 until the end of the stay.\nBreakfast is served from seven.",
    );
    const code = await memoryAbout("trip", /4471/);
    // An expiry that has passed (as the extractor or a v4 write sets one): the moment forgets it.
    const db: Db = await openDatabase(dir, testDatabase());
    try {
      await db
        .prepare("UPDATE memories SET forget_after = $1 WHERE id = $2")
        .run("2020-01-01T00:00:00.000Z", code.id);
      expect((await memories("trip")).some((m) => m.id === code.id)).toBe(false);
      expect(await sweepExpired({ db })).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
    saysNothingOf(await recall("trip", "hotel room number"), /4471|room number/);
    expect(matched(await search("trip", "breakfast", "chunks"))[0]?.text).toMatch(/Breakfast is served/);
  });
});

function saysAnything(hits: Hit[], word: RegExp): boolean {
  return hits.some((h) => word.test(h.text));
}

describe("forget means gone from recall, for memories a model extracted (no source span)", () => {
  /** A stand-in for an LLM extractor: one fact per sentence, in its own words, with no span. */
  const modelLike: Extractor = {
    name: "model-like",
    async extract(input) {
      return input.text
        .split(/(?<=[.!?])\s+|\n+/)
        .filter((s) => /\w/.test(s))
        .map((s) => ({
          memory: s
            .replace(/^I /, "The user ")
            .replace(/\bmy\b/g, "their")
            .replace(/\bam\b/, "is"),
          isStatic: true,
          subject: "user",
          attribute: null,
          eventDate: null,
        }));
    },
  };

  it("takes out the sentence that clearly says the memory, and nothing else", async () => {
    const t = await openTestEngine({ extractor: modelLike, workers: 1 });
    try {
      const content =
        "I am training for the Porto half marathon in October. My bike needs new brakes before winter.";
      const added = await t.call("POST", "/ns/model/document", { content, dreaming: "instant" });
      await until(
        async () => (await t.call("GET", `/ns/model/document/${added.body.id}`)).body.system,
        (s) => s.status === "done" && s.dreamingStatus === "done",
      );
      const listed = (await t.call("POST", "/ns/model/list/memories?limit=100", {})).body.memories as {
        id: string;
        memory: string;
      }[];
      const marathon = listed.find((m) => /marathon/.test(m.memory));
      expect(marathon?.memory).toMatch(/^The user is training/);
      await t.call("DELETE", "/ns/model/memories", { ids: [marathon!.id] });

      const chunks = async (query: string) =>
        (
          await t.call("POST", "/ns/model/search", { query, searchMode: "chunks", threshold: 0 })
        ).body.results.filter((h: { similarity: number }) => h.similarity > 0) as { chunk: string }[];
      expect(await chunks("Porto half marathon October")).toEqual([]);
      const brakes = await chunks("bike brakes");
      expect(brakes[0]?.chunk).toBe("My bike needs new brakes before winter.");
    } finally {
      await t.close();
    }
  });
});

describe("forget means gone from recall, with vectors", () => {
  /** A deterministic embedder of chunks and memories (words hashed into 64 dimensions), recording what it embeds. */
  class WordsEmbedder implements Embedder {
    readonly model = "words-64";
    readonly dimensions = 64;
    texts: string[] = [];
    async embed(texts: string[]): Promise<Float32Array[]> {
      this.texts.push(...texts);
      return texts.map((t) => {
        const v = new Float32Array(64);
        for (const w of t.toLowerCase().match(/[a-z]+/g) ?? []) {
          let h = 0;
          for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) % 64;
          v[h]! += 1;
        }
        const norm = Math.hypot(...v) || 1;
        return v.map((x) => x / norm);
      });
    }
  }

  it("embeds the passage again without the sentence: every chunk keeps a vector, made from what it now says", async () => {
    const embedder = new WordsEmbedder();
    const t = await openTestEngine({ workers: 1, embedder });
    try {
      const content = "My locker code is 4417 at the climbing gym. We climb on Saturday mornings with Dana.";
      const added = await t.call("POST", "/ns/vec/document", { content, dreaming: "instant" });
      await until(
        async () => (await t.call("GET", `/ns/vec/document/${added.body.id}`)).body.system,
        (s) => s.status === "done" && s.dreamingStatus === "done",
      );
      const listed = (await t.call("POST", "/ns/vec/list/memories?limit=100", {})).body.memories as {
        id: string;
        memory: string;
      }[];
      const locker = listed.find((m) => /4417/.test(m.memory));
      expect(locker).toBeDefined();
      embedder.texts = [];
      await t.call("DELETE", "/ns/vec/memories", { ids: [locker!.id] });

      expect(embedder.texts).toEqual(["We climb on Saturday mornings with Dana."]);
      const db = await openDatabase(t.dataDir, testDatabase());
      try {
        const rows = (await db
          .prepare(
            `SELECT c.content, v.model FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_rowid = c.rowid
              WHERE c.document_id = $1`,
          )
          .all(added.body.id)) as { content: string; model: string | null }[];
        expect(rows).toEqual([{ content: "We climb on Saturday mornings with Dana.", model: "words-64" }]);
      } finally {
        await db.close();
      }
      // Vector and lexical candidates alike: nothing recalls the code.
      const hits = (
        await t.call("POST", "/ns/vec/search", {
          query: "locker code climbing gym",
          searchMode: "hybrid",
          threshold: 0,
        })
      ).body.results as { memory?: string; chunk?: string }[];
      for (const h of hits) expect(h.memory ?? h.chunk).not.toMatch(/4417|locker/);
    } finally {
      await t.close();
    }
  });
});

describe("a document sent again after a forget", () => {
  it("draws no new memory from the forgotten sentence, however the extractor words it now, and keeps the forgotten one", async () => {
    // The offline extractor, wording its facts differently on each pass (as a changed extractor would).
    let pass = 0;
    const inner = new OfflineExtractor();
    const rewording: Extractor = {
      name: "rewording",
      async extract(input, signal) {
        pass += 1;
        const facts = await inner.extract(input, signal);
        return facts.map((f) => ({ ...f, memory: pass === 1 ? f.memory : `Noted again: ${f.memory}` }));
      },
    };
    const t = await openTestEngine({ extractor: rewording, workers: 1 });
    const send = async (content: string) => {
      await t.call("POST", "/ns/again/document", { id: "diary", content, dreaming: "instant" });
      await until(
        async () => (await t.call("GET", "/ns/again/document/diary")).body.system,
        (s) => s.status === "done" && s.dreamingStatus === "done",
      );
    };
    const list = async (forgotten = false) =>
      (await t.call("POST", "/ns/again/list/memories?limit=100", { include: { forgotten } })).body
        .memories as {
        id: string;
        memory: string;
        isForgotten: boolean;
      }[];
    try {
      const content = "My passport number is X1234567. I water the ferns every Sunday.";
      await send(content);
      const passport = (await list()).find((m) => /passport/.test(m.memory));
      expect(passport).toBeDefined();
      await t.call("DELETE", "/ns/again/memories", { ids: [passport!.id] });

      await send(`${content} The balcony door sticks in winter.`);
      const live = await list();
      expect(live.some((m) => /passport|X1234567/.test(m.memory))).toBe(false);
      // The rest of the document is remembered (in the new wording), the new sentence too.
      expect(live.some((m) => /ferns/.test(m.memory))).toBe(true);
      expect(live.some((m) => /balcony/.test(m.memory))).toBe(true);
      // The forgotten memory is still there, forgotten, with the document as its source.
      const kept = (await list(true)).find((m) => m.id === passport!.id);
      expect(kept?.isForgotten).toBe(true);
      const read = await t.call("GET", `/ns/again/memories/${passport!.id}?include=documents`);
      expect(read.body.included?.document?.customId).toBe("diary");
    } finally {
      await t.close();
    }
  });
});
