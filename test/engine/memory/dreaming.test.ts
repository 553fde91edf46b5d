import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OfflineExtractor } from "../../../src/engine/memory/extract/offline.js";
import type { ExtractionInput, Extractor } from "../../../src/engine/memory/extract/types.js";
import { OpenAICompatibleEmbedder } from "../../../src/engine/models/openai-compatible.js";
import { startFakeModelServer } from "../models/openai-server.js";
import { eventually, openTestEngine, type TestEngine } from "./harness.js";

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
      const jobs = first.engine.context.db.prepare("SELECT kind FROM jobs").all() as { kind: string }[];
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
      const vectors = t.engine.context.db
        .prepare(
          `SELECT m.memory, v.model, length(v.embedding) AS bytes FROM memories m
           JOIN memory_vectors v ON v.memory_rowid = m.rowid`,
        )
        .all() as { memory: string; model: string; bytes: number }[];
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
