/**
 * Search and profile latency, resident memory and stdio cold start at growing sizes (memories),
 * the same queries (LoCoMo questions) through three paths to one engine: in process (MemoryClient
 * over engine.fetch), over HTTP (`memctx serve` as its own process) and through MCP over stdio
 * (`memctx mcp` as an MCP client starts it); and the reference server (server-memory, same number
 * of observations) through MCP stdio. The corpus is seeded through the engine's store functions
 * (corpus.ts), not extraction: recall.ts is where the full pipeline is measured.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryClient } from "../../src/client/index.js";
import { openEngine } from "../../src/engine/index.js";
import {
  API_KEY,
  type BackendName,
  type Budget,
  backendName,
  type McpChild,
  newStorage,
  type Percentiles,
  round,
  rssMiB,
  startMemctxMcp,
  startServe,
  timeQueries,
} from "./common.js";
import { Corpus, seedDocuments, TURNS_PER_DOCUMENT } from "./corpus.js";
import { searchNodesTexts, seedServerMemory, serverMemoryEntry, startServerMemory } from "./server-memory.js";

export const PATHS = ["in-process", "HTTP", "MCP stdio", "server-memory (MCP stdio)"] as const;
export type PathName = (typeof PATHS)[number];

export interface PathFigures {
  search: Percentiles | null;
  profile: Percentiles | null;
  rssMiB: number | null;
  /** Spawn to the first tool result (stdio paths). */
  coldStartMs: number | null;
}

export interface SizePoint {
  memories: number;
  chunks: number;
  documents: number;
  seedSeconds: number;
  paths: Partial<Record<PathName, PathFigures>>;
}

export interface SpeedResult {
  /** The store's backend (absent in results from before `--backend`: SQLite). */
  backend?: BackendName;
  sizes: SizePoint[];
  queries: number;
  searchMode: "hybrid";
  limit: number;
  serverMemory: string;
  stopped: boolean;
}

const NAMESPACE = "bench";
const LIMIT = 10;

async function coldMcp(start: () => Promise<McpChild>, first: (c: McpChild) => Promise<unknown>) {
  const t0 = performance.now();
  const child = await start();
  await first(child);
  return { child, ms: performance.now() - t0 };
}

export async function benchSpeed(
  sizes: number[],
  queryCount: number,
  coldStarts: number,
  cli: string[],
  budget: Budget,
  log: (s: string) => void,
): Promise<SpeedResult> {
  const corpus = new Corpus();
  const queries = corpus.questions.slice(0, queryCount);
  const profileQueries = queries.slice(0, Math.max(20, Math.floor(queryCount / 5)));
  const dir = mkdtempSync(join(tmpdir(), "memctx-bench-speed-"));
  const tmp = mkdtempSync(join(tmpdir(), "memctx-bench-speed-ref-"));
  const fetched = await serverMemoryEntry();
  const result: SpeedResult = {
    backend: backendName(),
    sizes: [],
    queries: queries.length,
    searchMode: "hybrid",
    limit: LIMIT,
    serverMemory:
      "skipped" in fetched
        ? fetched.skipped
        : backendName() === "postgres"
          ? "measured on the SQLite run only: its store is its own file whatever memctx's backend"
          : "ok",
    stopped: false,
  };
  const storage = newStorage("speed");
  const engine = await openEngine({
    dataDir: dir,
    databaseUrl: storage.databaseUrl,
    apiKey: API_KEY,
    workers: 0,
    log: () => {},
  });
  const client = new MemoryClient({ apiKey: API_KEY, fetch: (r) => engine.fetch(r), maxRetries: 0 });
  const ns = client.ns(NAMESPACE);
  const search = (c: MemoryClient) => (q: string) => c.ns(NAMESPACE).search({ query: q, limit: LIMIT });
  const mcpSearch = (c: McpChild) => (q: string) => c.call("search", { query: q, limit: LIMIT });
  let documents = 0;
  try {
    for (const size of sizes) {
      if (budget.spent()) break;
      const t0 = performance.now();
      const target = Math.ceil(size / TURNS_PER_DOCUMENT);
      await seedDocuments(engine, corpus, NAMESPACE, documents, target);
      documents = target;
      if (backendName() === "postgres") {
        // A store in use is vacuumed by autovacuum: its postings are read from the index alone then
        // (the visibility map says so). This schema's table only: the database may hold others.
        engine.context.db.exec("VACUUM search_postings");
        engine.context.db.exec("ANALYZE");
      } else engine.context.db.exec("PRAGMA optimize");
      const seedSeconds = (performance.now() - t0) / 1000;
      const memories = (await ns.memories.list({ limit: 1 })).pagination.totalItems ?? 0;
      const chunks = (await ns.chunks.list({ limit: 1 })).pagination.totalItems ?? 0;
      log(`  ${memories} memories, ${chunks} chunks seeded in ${seedSeconds.toFixed(1)} s`);
      const point: SizePoint = {
        memories,
        chunks,
        documents,
        seedSeconds: round(seedSeconds, 1)!,
        paths: {},
      };
      result.sizes.push(point);

      // In process: the bench process holds the engine (its RSS includes the bench itself).
      point.paths["in-process"] = {
        search: await timeQueries(queries, search(client), budget),
        profile: await timeQueries(profileQueries, () => ns.profile.get(), budget, 3),
        rssMiB: rssMiB(process.pid),
        coldStartMs: null,
      };
      log(`  in-process p50 ${point.paths["in-process"].search?.p50.toFixed(2)} ms`);

      // HTTP: `memctx serve` as its own process.
      if (!budget.spent()) {
        const serve = await startServe(cli, dir, 0, storage.env);
        const http = new MemoryClient({ baseUrl: serve.url, apiKey: API_KEY, maxRetries: 0 });
        try {
          point.paths.HTTP = {
            search: await timeQueries(queries, search(http), budget),
            profile: await timeQueries(profileQueries, () => http.ns(NAMESPACE).profile.get(), budget, 3),
            rssMiB: rssMiB(serve.pid),
            coldStartMs: null,
          };
        } finally {
          await http.close();
          await serve.close();
        }
      }

      // MCP over stdio: cold start (spawn to the first search result), then the same queries.
      if (!budget.spent()) {
        const colds: number[] = [];
        let mcp: McpChild | null = null;
        for (let i = 0; i < coldStarts && !budget.spent(); i++) {
          await mcp?.close();
          const c = await coldMcp(
            () => startMemctxMcp(cli, dir, NAMESPACE, storage.env),
            (m) => mcpSearch(m)(queries[i]!),
          );
          mcp = c.child;
          colds.push(c.ms);
        }
        if (mcp) {
          try {
            point.paths["MCP stdio"] = {
              search: await timeQueries(queries, mcpSearch(mcp), budget),
              profile: await timeQueries(profileQueries, () => mcp.call("get_profile", {}), budget, 3),
              rssMiB: rssMiB(mcp.pid),
              coldStartMs: round(colds.sort((a, b) => a - b)[Math.floor(colds.length / 2)]!, 0),
            };
          } finally {
            await mcp.close();
          }
        }
      }

      // The reference server with as many observations, loaded through its own tools (its own
      // file whatever memctx's backend: measured on the SQLite run only).
      if (!("skipped" in fetched) && backendName() === "sqlite" && !budget.spent()) {
        const file = join(tmp, `memory-${size}.jsonl`);
        await seedServerMemory(fetched.entry, file, corpus, memories);
        const colds: number[] = [];
        let ref: McpChild | null = null;
        for (let i = 0; i < coldStarts && !budget.spent(); i++) {
          await ref?.close();
          const c = await coldMcp(
            () => startServerMemory(fetched.entry, file),
            (m) => m.call("search_nodes", { query: queries[i]! }),
          );
          ref = c.child;
          colds.push(c.ms);
        }
        if (ref) {
          const r = ref;
          try {
            point.paths["server-memory (MCP stdio)"] = {
              search: await timeQueries(
                queries,
                async (q) => searchNodesTexts(await r.call("search_nodes", { query: q })),
                budget,
              ),
              profile: null,
              rssMiB: rssMiB(r.pid),
              coldStartMs: round(colds.sort((a, b) => a - b)[Math.floor(colds.length / 2)]!, 0),
            };
          } finally {
            await r.close();
          }
        }
      }
    }
  } finally {
    await client.close();
    await engine.close();
    await storage.drop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
  result.stopped = budget.stopped;
  return result;
}
