/**
 * The reference MCP memory server, @modelcontextprotocol/server-memory, fetched with npx at bench
 * time (pinned): it brings its own copy of the MCP SDK and zod, which must stay out of this
 * project's tree. It is started with node on its entry file in npx's cache, so that the pid (for
 * resident memory) is the server's own and cold start has no npx in it.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type McpChild, NODE, startMcp } from "./common.js";
import type { Corpus } from "./corpus.js";

export const SERVER_MEMORY = "@modelcontextprotocol/server-memory";
export const SERVER_MEMORY_VERSION = "2026.8.31";

const run = promisify(execFile);

function findInCache(cache: string): string | null {
  const npx = join(cache, "_npx");
  if (!existsSync(npx)) return null;
  for (const hash of readdirSync(npx)) {
    const dir = join(npx, hash, "node_modules", SERVER_MEMORY);
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
      if (pkg.version === SERVER_MEMORY_VERSION && existsSync(join(dir, "dist/index.js")))
        return join(dir, "dist/index.js");
    } catch {
      // not this one
    }
  }
  return null;
}

/** The server's entry file, fetched into npx's cache when missing; or why it cannot be had. */
export async function serverMemoryEntry(): Promise<{ entry: string } | { skipped: string }> {
  try {
    const cache = (await run("npm", ["config", "get", "cache"], { timeout: 30_000 })).stdout.trim();
    let entry = findInCache(cache);
    if (!entry) {
      // Runs the server once with stdin closed: npx installs it, the server starts and exits.
      await run("npx", ["-y", `${SERVER_MEMORY}@${SERVER_MEMORY_VERSION}`], {
        timeout: 180_000,
        env: { ...process.env, MEMORY_FILE_PATH: join(cache, "_npx", "bench-probe.jsonl") },
      }).catch(() => undefined);
      entry = findInCache(cache);
    }
    return entry
      ? { entry }
      : {
          skipped: `${SERVER_MEMORY}@${SERVER_MEMORY_VERSION} could not be fetched with npx (npm registry unreachable?)`,
        };
  } catch (err) {
    return { skipped: `${SERVER_MEMORY} unavailable: ${err instanceof Error ? err.message : String(err)}` };
  }
}

export function startServerMemory(entry: string, memoryFile: string): Promise<McpChild> {
  return startMcp(NODE, [entry], { MEMORY_FILE_PATH: memoryFile });
}

/**
 * Loads entities (one per person) with their observations through the server's own tools:
 * create_entities, then add_observations in slices (each call rewrites its whole file).
 */
export async function loadEntities(
  server: McpChild,
  entities: Map<string, string[]>,
  slice = 2000,
): Promise<void> {
  await server.call("create_entities", {
    entities: [...entities.keys()].map((name) => ({ name, entityType: "person", observations: [] })),
  });
  for (const [name, observations] of entities) {
    for (let i = 0; i < observations.length; i += slice) {
      await server.call("add_observations", {
        observations: [{ entityName: name, contents: observations.slice(i, i + slice) }],
      });
    }
  }
}

/** What search_nodes hands back, as texts in its order: every observation of every matching entity. */
export function searchNodesTexts(r: CallToolResult): string[] {
  const s = r.structuredContent as { entities?: { observations: string[] }[] } | undefined;
  let entities = s?.entities;
  if (!entities) {
    const text = (r.content as { type: string; text?: string }[]).find((c) => c.type === "text")?.text;
    entities = text ? ((JSON.parse(text) as { entities?: { observations: string[] }[] }).entities ?? []) : [];
  }
  return entities.flatMap((e) => e.observations);
}

/**
 * server-memory's file holding `count` of the corpus's observations, one entity per speaker (as
 * many observations as memctx's store holds memories), loaded through the server's own tools.
 */
export async function seedServerMemory(
  entry: string,
  file: string,
  corpus: Corpus,
  count: number,
): Promise<void> {
  const entities = new Map<string, string[]>();
  for (let i = 0; i < count; i++) {
    const o = corpus.observation();
    const list = entities.get(o.who) ?? [];
    list.push(o.text);
    entities.set(o.who, list);
  }
  const loader = await startServerMemory(entry, file);
  try {
    if (entities.size) await loadEntities(loader, entities);
  } finally {
    await loader.close();
  }
}
