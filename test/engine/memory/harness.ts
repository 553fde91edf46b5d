import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Engine, openEngine } from "../../../src/engine/index.js";
import { commitFacts, installDreaming } from "../../../src/engine/memory/dreamer.js";
import type { Extractor } from "../../../src/engine/memory/extract/types.js";
import type { Fact } from "../../../src/engine/memory/relations.js";
import type { Embedder } from "../../../src/engine/models/embedder.js";
import { getDocumentRow } from "../../../src/engine/store/documents.js";

export const API_KEY = "mk_memory_tests_key";

export interface TestEngine {
  engine: Engine;
  dataDir: string;
  /** A request to the engine's HTTP API with the test key; JSON in, status and JSON out. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export interface TestEngineOptions {
  workers?: number;
  extractor?: Extractor;
  embedder?: Embedder | null;
  dataDir?: string;
  /** Dynamic dreaming bounds (through the environment, as an installed engine reads them). */
  debounceMs?: number;
  maxWaitMs?: number;
}

/** Opens a real engine on a temp dir, with memory generation installed through `dreamer`. */
export async function openTestEngine(o: TestEngineOptions = {}): Promise<TestEngine> {
  const dataDir = o.dataDir ?? (await mkdtemp(join(tmpdir(), "memctx-memory-")));
  process.env.MEMCTX_DREAM_DEBOUNCE_MS = String(o.debounceMs ?? 100);
  process.env.MEMCTX_DREAM_MAX_WAIT_MS = String(o.maxWaitMs ?? 1000);
  const engine = await openEngine({
    dataDir,
    apiKey: API_KEY,
    workers: o.workers ?? 0,
    embedder: o.embedder ?? null,
    extractor: o.extractor,
    dreamer: (ctx) => installDreaming(ctx),
    log: () => {},
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await engine.fetch(
      new Request(`http://memctx.test${path}`, {
        method,
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    engine,
    dataDir,
    call,
    close: async () => {
      await engine.close();
      if (!o.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Stores a document through the API, then the facts a dreamer would have extracted from it,
 * through the dreamer's own commit (relations, sources, dreamingStatus done). Needs workers: 0.
 */
export async function addFacts(
  t: TestEngine,
  namespace: string,
  facts: Partial<Fact>[],
  doc: {
    content?: string;
    metadata?: Record<string, unknown>;
    filterByMetadata?: Record<string, unknown>;
  } = {},
): Promise<{ documentId: string; memoryIds: string[] }> {
  const res = await t.call("POST", `/ns/${namespace}/document`, {
    content: doc.content ?? facts.map((f) => f.memory).join("\n"),
    ...(doc.metadata ? { metadata: doc.metadata } : {}),
    ...(doc.filterByMetadata ? { filterByMetadata: doc.filterByMetadata } : {}),
  });
  if (res.status !== 200) throw new Error(`add failed: ${JSON.stringify(res.body)}`);
  const row = (await getDocumentRow(t.engine.context.db, res.body.id))!;
  const applied = await commitFacts(
    t.engine.context.db,
    row,
    row.generation,
    facts.map((f) => ({
      memory: f.memory ?? "",
      isStatic: f.isStatic ?? false,
      subject: f.subject ?? null,
      attribute: f.attribute ?? null,
      eventDate: f.eventDate ?? null,
      isInference: f.isInference ?? false,
      ...(f.forgetAfter !== undefined ? { forgetAfter: f.forgetAfter } : {}),
    })),
  );
  return { documentId: res.body.id, memoryIds: applied.map((a) => a.memoryId) };
}
