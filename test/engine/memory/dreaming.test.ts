import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OfflineExtractor } from "../../../src/engine/memory/extract/offline.js";
import type { ExtractionInput, Extractor } from "../../../src/engine/memory/extract/types.js";
import { OpenAICompatibleEmbedder } from "../../../src/engine/models/openai-compatible.js";
import { eventually } from "../../support/wait.js";
import { startFakeModelServer } from "../models/openai-server.js";
import { openTestEngine, type TestEngine } from "./harness.js";

let open: TestEngine[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});
const start = async (o: Parameters<typeof openTestEngine>[0] = {}) => {
  const t = await openTestEngine({ workers: 1, ...o });
  open.push(t);
  return t;
};

/** The offline extractor, taking its time: a gap between extraction and indexing would show. */
class SlowExtractor implements Extractor {
  readonly name = "slow-offline";
  private readonly inner = new OfflineExtractor();
  async extract(input: ExtractionInput, signal?: AbortSignal) {
    await new Promise((r) => setTimeout(r, 300));
    return this.inner.extract(input, signal);
  }
}

type Doc = { system: { status: string; dreamingStatus: string }; memories?: { memory: string }[] };

describe("dreaming", () => {
  it("instant: by the time status is done, the document's memories are searchable and in the profile", async () => {
    const t = await start({ extractor: new SlowExtractor() });
    const add = await t.call("POST", "/ns/alice/document?dreaming=instant", {
      content: "user: I live in Berlin and I work as a carpenter.",
    });
    expect(add.body.status).toBe("queued");
    const doc = await eventually(async () => {
      const d = (await t.call("GET", `/ns/alice/document/${add.body.id}?include=memories`)).body as Doc;
      return d.system.status === "done" ? d : undefined;
    }, "status done");
    expect(doc.system.dreamingStatus).toBe("done");
    expect(doc.memories!.length).toBeGreaterThan(0);
    const found = await t.call("POST", "/ns/alice/search", { query: "Berlin", searchMode: "memories" });
    expect(found.body.results.length).toBeGreaterThan(0);
    const { profile } = (await t.call("POST", "/ns/alice/profile", {})).body;
    expect(
      [...profile.static, ...profile.dynamic].map((m: { memory: string }) => m.memory).join(" "),
    ).toContain("Berlin");
  });

  it("instant: a conversation's lasting facts land in the profile's static part, its dated events in dynamic", async () => {
    const t = await start();
    const add = await t.call("POST", "/ns/alice/document?dreaming=instant", {
      date: "2024-05-10",
      content: [
        "user: Hi! I live in Paris and I work as a nurse.",
        "assistant: Nice to meet you!",
        "user: Yesterday I went hiking with my sister Emma.",
      ].join("\n"),
    });
    await eventually(async () => {
      const d = (await t.call("GET", `/ns/alice/document/${add.body.id}`)).body as Doc;
      return d.system.status === "done" ? d : undefined;
    }, "status done");
    const { profile } = (await t.call("POST", "/ns/alice/profile", {})).body;
    const text = (refs: { memory: string }[]) => refs.map((m) => m.memory).join(" | ");
    expect(text(profile.static)).toContain("Paris");
    expect(text(profile.static)).not.toContain("hiking");
    expect(text(profile.dynamic)).toContain("hiking");
    expect(text(profile.dynamic)).toContain("9 May 2024");
  });

  it("dynamic: batches a namespace's documents and reaches dreamingStatus done within its bound", async () => {
    const t = await start({ debounceMs: 200, maxWaitMs: 1500 });
    const ids: string[] = [];
    for (const content of [
      "user: I live in Berlin.",
      "user: I love jazz.",
      "user: My sister Emma is a doctor.",
    ]) {
      ids.push((await t.call("POST", "/ns/alice/document", { content })).body.id);
    }
    const docs = await eventually(async () => {
      const all = await Promise.all(
        ids.map(async (id) => (await t.call("GET", `/ns/alice/document/${id}?include=memories`)).body as Doc),
      );
      return all.every((d) => d.system.dreamingStatus === "done") ? all : undefined;
    }, "dreamingStatus done");
    for (const d of docs) expect(d.system.status).toBe("done");
    expect(docs.flatMap((d) => d.memories!).length).toBeGreaterThanOrEqual(3);
    const listed = await t.call("POST", "/ns/alice/list/memories", {});
    expect(listed.body.pagination.totalItems).toBeGreaterThanOrEqual(3);
  });

  it("dynamic: dreams a batch oldest documentDate first, so the newer fact supersedes the older", async () => {
    // A long debounce with a short max wait: both documents land in one batch.
    const t = await start({ debounceMs: 800, maxWaitMs: 1500 });
    const newer = await t.call("POST", "/ns/alice/document", {
      content: "user: I live in Berlin.",
      date: "2024-06-01",
    });
    const older = await t.call("POST", "/ns/alice/document", {
      content: "user: I live in Paris.",
      date: "2024-01-01",
    });
    await eventually(async () => {
      const all = await Promise.all(
        [newer, older].map(async (r) => (await t.call("GET", `/ns/alice/document/${r.body.id}`)).body as Doc),
      );
      return all.every((d) => d.system.dreamingStatus === "done") ? true : undefined;
    }, "dreamingStatus done");
    // A plain list shows only latest versions; include.forgotten lists every row, superseded ones too.
    const listed = (await t.call("POST", "/ns/alice/list/memories", { include: { forgotten: true } })).body
      .memories as {
      memory: string;
      isLatest: boolean;
    }[];
    const berlin = listed.find((m) => m.memory.includes("Berlin"));
    const paris = listed.find((m) => m.memory.includes("Paris"));
    expect(berlin?.isLatest).toBe(true);
    expect(paris?.isLatest).toBe(false);
  });

  it("gives superrag documents no memories and dreamingStatus done", async () => {
    const t = await start();
    const add = await t.call("POST", "/ns/alice/document?taskType=superrag", {
      content: "user: I live in Berlin.",
    });
    const doc = await eventually(async () => {
      const d = (await t.call("GET", `/ns/alice/document/${add.body.id}?include=memories`)).body as Doc;
      return d.system.dreamingStatus === "done" ? d : undefined;
    }, "dreamingStatus done");
    expect(doc.system.status).toBe("done");
    expect(doc.memories).toEqual([]);
  });

  it("dynamic: a batch left waiting by a closed engine is dreamed by the next one on the data directory", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "memctx-memory-resume-"));
    try {
      const first = await openTestEngine({ dataDir, workers: 1, debounceMs: 60_000, maxWaitMs: 120_000 });
      const add = await first.call("POST", "/ns/alice/document", { content: "user: I live in Berlin." });
      await eventually(async () => {
        const d = (await first.call("GET", `/ns/alice/document/${add.body.id}`)).body as Doc;
        return d.system.status === "done" ? true : undefined;
      }, "status done");
      const jobs = (await first.engine.context.db.prepare("SELECT kind FROM jobs").all()) as {
        kind: string;
      }[];
      expect(jobs.map((j) => j.kind)).toEqual(["dream"]);
      expect(
        ((await first.call("GET", `/ns/alice/document/${add.body.id}`)).body as Doc).system.dreamingStatus,
      ).toBe("dreaming");
      await first.close();

      const second = await openTestEngine({ dataDir, workers: 1, debounceMs: 100, maxWaitMs: 500 });
      open.push(second);
      const doc = await eventually(async () => {
        const d = (await second.call("GET", `/ns/alice/document/${add.body.id}?include=memories`))
          .body as Doc;
        return d.system.dreamingStatus === "done" ? d : undefined;
      }, "dreamingStatus done after reopening");
      expect(doc.memories!.map((m) => m.memory).join(" ")).toContain("Berlin");
    } finally {
      for (const t of open) await t.close();
      open = [];
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("never leaves a document dreaming when the extractor keeps failing", async () => {
    const failing: Extractor = {
      name: "failing",
      async extract() {
        throw new Error("model unavailable");
      },
    };
    const t = await start({ extractor: failing, debounceMs: 50, maxWaitMs: 200 });
    const instant = await t.call("POST", "/ns/alice/document?dreaming=instant", {
      content: "user: I live in Oslo.",
    });
    const dynamic = await t.call("POST", "/ns/alice/document", { content: "user: I live in Rome." });
    const docs = await eventually(async () => {
      const all = await Promise.all(
        [instant, dynamic].map(
          async (r) => (await t.call("GET", `/ns/alice/document/${r.body.id}?include=memories`)).body as Doc,
        ),
      );
      return all.every((d) => d.system.dreamingStatus === "done") ? all : undefined;
    }, "dreamingStatus done despite a failing extractor");
    // Indexed and searchable as chunks, without memories.
    for (const d of docs) {
      expect(d.system.status).toBe("done");
      expect(d.memories).toEqual([]);
    }
    const found = await t.call("POST", "/ns/alice/search", { query: "Oslo", searchMode: "chunks" });
    expect(found.body.results.length).toBe(1);
  });

  it("stores a vector with each new memory when an embedder is configured", async () => {
    const models = await startFakeModelServer();
    try {
      const embedder = new OpenAICompatibleEmbedder({ baseUrl: models.baseUrl, model: "test-embed" });
      const t = await start({ embedder });
      const add = await t.call("POST", "/ns/alice/document?dreaming=instant", {
        content: "user: I live in Berlin. I love jazz.",
      });
      const doc = await eventually(async () => {
        const d = (await t.call("GET", `/ns/alice/document/${add.body.id}?include=memories`)).body as Doc;
        return d.system.status === "done" ? d : undefined;
      }, "status done");
      expect(doc.memories!.length).toBeGreaterThan(0);
      const vectors = (await t.engine.context.db
        .prepare(
          `SELECT m.memory, v.model, length(v.embedding) AS bytes FROM memories m
           JOIN memory_vectors v ON v.memory_rowid = m.rowid`,
        )
        .all()) as { memory: string; model: string; bytes: number }[];
      expect(vectors.map((v) => v.memory).sort()).toEqual(doc.memories!.map((m) => m.memory).sort());
      expect(new Set(vectors.map((v) => `${v.model}/${v.bytes}`))).toEqual(new Set(["test-embed/16"]));
      const asked = models.requests
        .filter((r) => r.path === "/v1/embeddings")
        .flatMap((r) => r.body.input as string[]);
      for (const m of doc.memories!) expect(asked).toContain(m.memory);
    } finally {
      await models.close();
    }
  });
});

describe("re-sending a document by id", () => {
  const content = "Melanie: How was your week?\nCaroline: Yesterday I went to an LGBTQ support group.";
  type Full = Doc & { chunks?: { content: string }[]; memories?: { memory: string }[] };
  const done = async (t: TestEngine) =>
    await eventually(async () => {
      const d = (await t.call("GET", "/ns/c/document/s1?include=memories,chunks")).body as Full;
      return d.system.status === "done" && d.system.dreamingStatus === "done" ? d : undefined;
    }, "status done");
  const send = (t: TestEngine, body: Record<string, unknown>) =>
    t.call("POST", "/ns/c/document", { id: "s1", content, dreaming: "instant", ...body });

  it("with a new date reprocesses: chunk labels and resolved dates follow it; the same request again does nothing", async () => {
    const t = await start();
    const added = await send(t, { date: "2023-05-08" });
    expect(added.body.status).toBe("queued");
    const first = await done(t);
    expect(first.memories!.map((m) => m.memory).join(" ")).toContain("7 May 2023");
    const label = async () =>
      (await t.call("POST", "/ns/c/search", { query: "support group", searchMode: "chunks" })).body.results
        .map((r: { chunk: string }) => r.chunk)
        .join(" ");
    expect(await label()).toContain("[8 May 2023]");

    expect((await send(t, { date: "2023-06-10" })).body.status).toBe("queued");
    const second = await done(t);
    expect(await label()).toContain("[10 June 2023]");
    const memories = second.memories!.map((m) => m.memory).join(" ");
    expect(memories).toContain("9 June 2023");
    // The fact dated by the old date is no longer what the document says: it is gone.
    expect(memories).not.toContain("7 May 2023");
    const all = (await t.call("POST", "/ns/c/list/memories", { include: { forgotten: true } })).body.memories;
    expect(all.map((m: { memory: string }) => m.memory).join(" ")).not.toContain("7 May 2023");

    // Identical in every input: the current status, nothing queued.
    expect((await send(t, { date: "2023-06-10" })).body).toEqual({ id: added.body.id, status: "done" });
  });

  it("with new metadata gives the memories that metadata (a past forgetAfter forgets them)", async () => {
    const t = await start();
    await send(t, { date: "2023-05-08" });
    await done(t);
    const live = async () =>
      (await t.call("POST", "/ns/c/list/memories", {})).body.memories as {
        metadata: Record<string, unknown>;
      }[];
    expect((await live()).length).toBeGreaterThan(0);

    expect((await send(t, { date: "2023-05-08", metadata: { topic: "support" } })).body.status).toBe(
      "queued",
    );
    await done(t);
    const tagged = await live();
    expect(tagged.length).toBeGreaterThan(0);
    for (const m of tagged) expect(m.metadata).toMatchObject({ topic: "support" });

    await send(t, { date: "2023-05-08", metadata: { topic: "support", forgetAfter: "2020-01-01" } });
    await done(t);
    expect(await live()).toEqual([]);
  });

  it("with new content keeps what it still says (same ids), drops what only it said, and leaves others' support", async () => {
    const t = await start();
    type Mem = { id: string; memory: string; documentId: string };
    const memories = async () =>
      (await t.call("POST", "/ns/c/list/memories?limit=100", { include: { forgotten: true } })).body
        .memories as Mem[];
    const sendAs = async (id: string, text: string) => {
      const r = await t.call("POST", "/ns/c/document", { id, content: text, dreaming: "instant" });
      expect(r.status).toBe(200);
      await eventually(async () => {
        const d = (await t.call("GET", `/ns/c/document/${id}`)).body as Doc;
        return d.system.status === "done" && d.system.dreamingStatus === "done" ? d : undefined;
      }, `${id} done`);
      return r.body.id as string;
    };
    const first = await sendAs(
      "a",
      "user: I live in Lisbon.\nassistant: Nice!\nuser: I have a cat named Tom.\nassistant: Cute.\nuser: I play the cello.",
    );
    const second = await sendAs("b", "user: I play the cello.\nassistant: Lovely.");
    const before = await memories();
    const cat = before.find((m) => m.memory.includes("Tom"))!;
    const cello = before.find((m) => m.memory.includes("cello"))!;
    expect(cat && cello && before.some((m) => m.memory.includes("Lisbon"))).toBeTruthy();
    expect(cello.documentId).toBe(second);

    // "a" no longer mentions Lisbon or the cello.
    await sendAs("a", "user: I have a cat named Tom.\nassistant: Cute.");
    const after = await memories();
    expect(after.some((m) => m.memory.includes("Lisbon"))).toBe(false);
    expect(after.find((m) => m.memory.includes("Tom"))?.id).toBe(cat.id);
    // Still said by "b": kept, and now only "b" is its source.
    const stillCello = after.find((m) => m.memory.includes("cello"));
    expect(stillCello?.id).toBe(cello.id);
    expect(stillCello?.documentId).toBe(second);
    const read = (await t.call("GET", `/ns/c/memories/${cello.id}?include=documents`)).body;
    expect(JSON.stringify(read)).not.toContain(first);
  });

  it("as superrag takes away the memories its earlier version made", async () => {
    const t = await start();
    await send(t, { date: "2023-05-08" });
    expect((await done(t)).memories!.length).toBeGreaterThan(0);
    expect((await send(t, { date: "2023-05-08", taskType: "superrag" })).body.status).toBe("queued");
    expect((await done(t)).memories).toEqual([]);
    const all = (await t.call("POST", "/ns/c/list/memories", { include: { forgotten: true } })).body.memories;
    expect(all).toEqual([]);
  });
});
