import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient, type NamespaceClient } from "../../src/client/index.js";
import { CONTEXT_TURNS } from "../../src/engine/ingest/chunk.js";
import { OfflineExtractor } from "../../src/engine/memory/extract/offline.js";
import type { ExtractionInput, Extractor } from "../../src/engine/memory/extract/types.js";
import type { Embedder } from "../../src/engine/models/embedder.js";
import { API_KEY, openTestEngine, type TestEngine } from "./memory/harness.js";

/** The real offline extractor, recording the text of every call. */
class RecordingExtractor implements Extractor {
  readonly name = "offline";
  readonly inner = new OfflineExtractor();
  texts: string[] = [];
  extract(input: ExtractionInput, signal?: AbortSignal) {
    this.texts.push(input.text);
    return this.inner.extract(input, signal);
  }
}

/** A deterministic embedder of chunks and memories (a bag of letters), recording what it embeds. */
class RecordingEmbedder implements Embedder {
  readonly model = "letters";
  readonly dimensions = 26;
  texts: string[] = [];
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.texts.push(...texts);
    return texts.map((t) => {
      const v = new Float32Array(26);
      for (const ch of t.toLowerCase()) {
        const i = ch.charCodeAt(0) - 97;
        if (i >= 0 && i < 26) v[i]! += 1;
      }
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    });
  }
}

const TURNS = [
  "user: My sister Alice lives in Lyon and works as a nurse.",
  "assistant: Good to know that Alice is a nurse in Lyon.",
  "user: I adopted a cat named Pixel last spring.",
  "assistant: Pixel sounds lovely.",
  "user: My favourite food is mushroom risotto.",
  "assistant: Noted, mushroom risotto.",
  "user: My brother Tomas plays the cello in Berlin.",
  "assistant: A cellist in Berlin, how nice.",
];
/** Turns sent first; the rest are appended afterwards, and must be the only ones processed then. */
const EARLY = 6;

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function open() {
  const extractor = new RecordingExtractor();
  const embedder = new RecordingEmbedder();
  t = await openTestEngine({ workers: 1, extractor, embedder });
  const client = new MemoryClient({ apiKey: API_KEY, fetch: t.engine.fetch, maxRetries: 0 });
  return { t, extractor, embedder, ns: client.ns("chat") };
}

async function appendTurn(ns: NamespaceClient, id: string, turn: string) {
  const res = await ns.documents.add({ id, content: turn, append: true });
  await ns.documents.waitFor(res.id, { until: "memories", pollIntervalMs: 20 });
  return res;
}

interface ChunkState {
  id: string;
  position: number;
  content: string;
  context: string;
}
const chunksOf = async (e: TestEngine, documentId: string) =>
  (await e.engine.context.db
    .prepare("SELECT id, position, content, context FROM chunks WHERE document_id = $1 ORDER BY position")
    .all(documentId)) as unknown as ChunkState[];

const liveMemories = async (e: TestEngine, namespace: string) =>
  (
    (await e.engine.context.db
      .prepare(
        `SELECT m.memory FROM memories m JOIN namespaces n ON n.id = m.namespace_id
         WHERE n.name = $1 AND m.is_latest = 1 AND m.is_forgotten = 0 ORDER BY m.memory`,
      )
      .all(namespace)) as { memory: string }[]
  ).map((m) => m.memory);

describe("an appended conversation is processed one new part at a time", () => {
  it("chunks, embeds and extracts only the new turns, brings the last turns' context up to date, and search finds every turn", async () => {
    const { t, extractor, embedder, ns } = await open();
    let docId = "";
    for (const turn of TURNS.slice(0, EARLY)) docId = (await appendTurn(ns, "conv-1", turn)).id;
    const before = await chunksOf(t, docId);
    expect(before).toHaveLength(EARLY);
    const memoriesBefore = await liveMemories(t, "chat");
    expect(memoriesBefore.length).toBeGreaterThan(0);

    extractor.texts = [];
    embedder.texts = [];
    for (const turn of TURNS.slice(EARLY)) await appendTurn(ns, "conv-1", turn);

    // Extraction read each new turn alone, never an earlier one.
    expect(extractor.texts).toEqual(TURNS.slice(EARLY));
    // Chunk vectors: only the new turns' (the rest of the embedder's work is the new memories).
    for (const old of TURNS.slice(0, EARLY)) expect(embedder.texts).not.toContain(old);
    for (const turn of TURNS.slice(EARLY)) expect(embedder.texts).toContain(turn);

    const after = await chunksOf(t, docId);
    expect(after.map((c) => c.content)).toEqual(TURNS);
    // The earlier turns' chunks are the same rows...
    expect(after.slice(0, EARLY).map((c) => c.id)).toEqual(before.map((c) => c.id));
    // ...whose context now holds the turns that follow them, up to CONTEXT_TURNS away.
    for (const [i, chunk] of after.entries()) {
      const around = [
        ...TURNS.slice(Math.max(0, i - CONTEXT_TURNS), i),
        ...TURNS.slice(i + 1, i + 1 + CONTEXT_TURNS),
      ];
      expect(chunk.context, `turn ${i}`).toBe(around.join("\n"));
    }
    expect((await after)[EARLY - CONTEXT_TURNS]!.context).toContain(TURNS[EARLY]);
    expect((await after)[EARLY - CONTEXT_TURNS - 1]!.context).not.toContain(TURNS[EARLY]);

    // The earlier turns' memories stay, the new ones join them.
    const memoriesAfter = await liveMemories(t, "chat");
    for (const m of await memoriesBefore) expect(memoriesAfter).toContain(m);
    expect(memoriesAfter.length).toBeGreaterThan(memoriesBefore.length);

    // The same transcript sent whole to another namespace gives the same memories.
    const whole = new MemoryClient({ apiKey: API_KEY, fetch: t.engine.fetch, maxRetries: 0 }).ns("whole");
    const sent = await whole.documents.add({ id: "conv-1", content: TURNS.join("\n") });
    await whole.documents.waitFor(sent.id, { until: "memories", pollIntervalMs: 20 });
    expect(memoriesAfter).toEqual(await liveMemories(t, "whole"));

    // Search finds every turn's facts and passages.
    for (const [query, word] of [
      ["Where does Alice live?", "Lyon"],
      ["What is the cat called?", "Pixel"],
      ["favourite food", "risotto"],
      ["Who plays the cello?", "Tomas"],
    ] as const) {
      const memories = await ns.search({ query, searchMode: "memories", limit: 5 });
      expect(
        memories.results.some((r) => r.memory?.includes(word)),
        `${query}: ${JSON.stringify(memories.results)}`,
      ).toBe(true);
      const chunks = await ns.search({ query, searchMode: "chunks", limit: 5 });
      expect(chunks.results.some((r) => r.chunk?.includes(word))).toBe(true);
    }
  });

  it("reads the whole transcript again when it is replaced or its metadata changes", async () => {
    const { t, extractor, ns } = await open();
    let docId = "";
    for (const turn of TURNS.slice(0, 3)) docId = (await appendTurn(ns, "conv-2", turn)).id;

    extractor.texts = [];
    const retagged = await ns.documents.add({
      id: "conv-2",
      content: TURNS[3]!,
      append: true,
      metadata: { project: "family" },
    });
    await ns.documents.waitFor(retagged.id, { until: "memories", pollIntervalMs: 20 });
    // New metadata applies to every memory of the document: all of it was read.
    expect(extractor.texts).toEqual([TURNS.slice(0, 4).join("\n")]);

    extractor.texts = [];
    const replaced = await ns.documents.add({ id: "conv-2", content: TURNS.slice(4, 6).join("\n") });
    await ns.documents.waitFor(replaced.id, { until: "memories", pollIntervalMs: 20 });
    expect(extractor.texts).toEqual([TURNS.slice(4, 6).join("\n")]);
    expect((await chunksOf(t, docId)).map((c) => c.content)).toEqual(TURNS.slice(4, 6));
    // What the replaced transcript said is no longer a memory of it.
    expect((await liveMemories(t, "chat")).some((m) => m.includes("Lyon"))).toBe(false);
  });

  it("reads the last turn whole again when a line is appended to it", async () => {
    const { extractor, ns } = await open();
    for (const turn of TURNS.slice(0, 2)) await appendTurn(ns, "conv-3", turn);
    extractor.texts = [];
    // A line without a role continues the turn before it: that turn changed, so all is read.
    await appendTurn(ns, "conv-3", "and she has two children");
    expect(extractor.texts).toEqual([`${TURNS.slice(0, 2).join("\n")}\nand she has two children`]);
  });
});
