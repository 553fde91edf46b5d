import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryClient } from "../../src/client/index.js";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { type Sample, sessions, transcript } from "./data.js";
import type { Mode } from "./retrieval.js";

/** Ranked hit texts per question, from the real engine (in process, temp data dir). */
export interface EngineRun {
  search(sample: Sample, question: string, mode: Mode): Promise<string[]>;
  close(): Promise<void>;
  ingestSeconds: number;
}

/**
 * Adds a sample's sessions to its namespace as the data's README says (id `<sample_id>-s<n>`, one
 * conversation document per session, its date as the document date, instant dreaming) and waits
 * for their memories. Returns how many sessions and turns it added.
 */
export async function ingestSample(
  client: MemoryClient,
  sample: Sample,
  opts: { captions?: boolean } = {},
): Promise<{ sessions: number; turns: number }> {
  const ns = client.ns(sample.sample_id);
  const ids: string[] = [];
  let turns = 0;
  for (const s of sessions(sample)) {
    const id = `${sample.sample_id}-s${s.key.replace("session_", "")}`;
    await ns.documents.add({
      id,
      content: transcript(s, opts),
      ...(s.date ? { date: s.date } : {}),
      dreaming: "instant",
    });
    ids.push(id);
    turns += s.turns.length;
  }
  for (const id of ids) await ns.documents.waitFor(id, { until: "memories", timeoutMs: 600_000 });
  return { sessions: ids.length, turns };
}

/**
 * Ingests every session as a user would (one conversation document per session, its date as the
 * document date, one namespace per sample, instant dreaming) and waits for the memories. With
 * `storePerSample`, each sample gets its own data directory (engine): the FTS indexes, and so BM25's
 * term statistics, hold that conversation alone, as for a user whose store holds one namespace.
 */
export async function engineRun(
  data: Sample[],
  opts: { threshold?: number; limit: number; storePerSample?: boolean; captions?: boolean },
): Promise<EngineRun> {
  const dir = mkdtempSync(join(tmpdir(), "memctx-locomo-"));
  const apiKey = "mk_locomo_bench_key";
  const engines: Engine[] = [];
  const clients = new Map<string, MemoryClient>();
  const clientFor = async (sample: Sample) => {
    if (engines.length === 0 || opts.storePerSample) {
      // The engine's own default embedder (the built-in word vectors unless MEMCTX_EMBEDDINGS says otherwise).
      const dataDir = opts.storePerSample ? join(dir, sample.sample_id) : dir;
      const engine = await openEngine({ dataDir, apiKey, log: () => {} });
      engines.push(engine);
    }
    const engine = engines.at(-1)!;
    const client = new MemoryClient({ apiKey, fetch: (req) => engine.fetch(req), maxRetries: 0 });
    clients.set(sample.sample_id, client);
    return client;
  };
  const t0 = performance.now();
  for (const sample of data)
    await ingestSample(await clientFor(sample), sample, { captions: opts.captions ?? false });
  const ingestSeconds = (performance.now() - t0) / 1000;
  return {
    ingestSeconds,
    async search(sample, question, mode) {
      const res = await clients
        .get(sample.sample_id)!
        .ns(sample.sample_id)
        .search({
          query: question,
          searchMode: mode,
          limit: opts.limit,
          ...(opts.threshold !== undefined ? { threshold: opts.threshold } : {}),
        });
      return res.results.map(
        (r) => (r as { memory?: string; chunk?: string }).memory ?? (r as { chunk?: string }).chunk ?? "",
      );
    },
    async close() {
      for (const engine of engines) await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
