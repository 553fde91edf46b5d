/**
 * Where the API lives, decided from configuration: MEMCTX_API_URL (+ MEMCTX_API_KEY) for a
 * `memctx serve` instance or the hosted service, else the embedded engine in this process.
 * The CLI is the only place that wires the engine and the MCP server together.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { MemoryClient } from "../client/index.js";
import { defaultDataDir, makeDataDir } from "../engine/data-dir.js";
import type { Engine } from "../engine/index.js";
import { CliError } from "./cli-error.js";

export interface Backend {
  mode: "embedded" | "remote";
  /** The remote API's address; undefined when embedded. */
  apiUrl: string | undefined;
  /** The embedded engine's data directory; undefined when remote. */
  dataDir: string | undefined;
  /** Which embedder and extractor the embedded engine runs ("embedder …, extractor …"); undefined when remote. */
  readonly models: string | undefined;
  /** The embedded engine's background jobs per state; undefined when remote (the API does not report them). */
  jobCounts(): Promise<Record<string, number> | undefined>;
  /** The process's own client (stdio): MEMCTX_API_KEY, or the local key of the embedded engine. */
  readonly client: MemoryClient;
  /** A client that acts with a caller's key (HTTP sessions); close it when the session ends. */
  clientFor(apiKey: string): MemoryClient;
  /** The embedded engine reads what a search reads, in the background; nothing for a remote API. */
  preloadSearch(): void;
  close(): Promise<void>;
}

export interface BackendFlags {
  dataDir?: string;
  /** Background processing loops of an embedded engine (0 for a command that only reads, like status). */
  workers?: number;
  /** HTTP hosting: every session brings its own key, so MEMCTX_API_KEY is optional when remote. */
  perCallerKeys?: boolean;
}

/**
 * A setting from the environment. Empty values count as unset, and so does an unfilled
 * `${user_config.x}` placeholder: bundle hosts pass those for options the user left blank.
 */
export function setting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v && !/^\$\{user_config\.[^}]*\}$/.test(v) ? v : undefined;
}

/** The key of this data directory's own MCP server, kept beside the database (one row, not one per start). */
export const LOCAL_KEY_FILE = "mcp-local.key";

function localKey(dataDir: string): string {
  const file = join(dataDir, LOCAL_KEY_FILE);
  // Made here, before the engine opens it: 0700, as `memctx serve` makes it (the key lives in it).
  makeDataDir(dataDir);
  try {
    writeFileSync(file, `mk_local_${randomBytes(24).toString("hex")}\n`, { flag: "wx", mode: 0o600 });
  } catch (err) {
    // Another process made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const key = readFileSync(file, "utf8").trim();
  if (!key) throw new CliError(`${file} is empty; delete it and start again`);
  return key;
}

export async function openBackend(env: NodeJS.ProcessEnv, flags: BackendFlags = {}): Promise<Backend> {
  // Loaded when a backend opens, not with the command: `memctx --help` must answer on any Node.
  const { MemoryClient } = await import("../client/index.js");
  const apiUrl = setting(env, "MEMCTX_API_URL");
  const apiKey = setting(env, "MEMCTX_API_KEY");

  if (apiUrl) {
    try {
      new URL(apiUrl);
    } catch {
      throw new CliError(`MEMCTX_API_URL is not a URL: ${apiUrl}`);
    }
    if (!apiKey && !flags.perCallerKeys) {
      throw new CliError("MEMCTX_API_URL is set but MEMCTX_API_KEY is not: set the API key for that server");
    }
    const own = apiKey ? new MemoryClient({ baseUrl: apiUrl, apiKey }) : undefined;
    return {
      mode: "remote",
      apiUrl,
      dataDir: undefined,
      models: undefined,
      jobCounts: async () => undefined,
      get client() {
        if (!own) throw new CliError("MEMCTX_API_KEY is not set");
        return own;
      },
      clientFor: (key) => new MemoryClient({ baseUrl: apiUrl, apiKey: key }),
      preloadSearch: () => {},
      close: async () => {
        await own?.close();
      },
    };
  }

  const dataDir =
    flags.dataDir ?? setting(env, "MEMCTX_DATA_DIR") ?? defaultDataDir({ ...env, MEMCTX_DATA_DIR: "" });
  const key = apiKey ?? localKey(dataDir);
  // A MEMCTX_API_KEY given at start is registered for the local organization, as `memctx serve` does.
  // Loaded only here: a remote setup never pays for the engine's modules.
  const { openEngine } = await import("../engine/index.js");
  const engine = await openEngine({
    dataDir,
    apiKey: key,
    ...(flags.workers !== undefined ? { workers: flags.workers } : {}),
  });
  const { jobCounts } = await import("../engine/store/jobs.js");
  const own = new MemoryClient({ apiKey: key, fetch: engine.fetch });
  return {
    mode: "embedded",
    apiUrl: undefined,
    dataDir,
    models: describeModels(engine.models),
    jobCounts: () => jobCounts(engine.context.db),
    client: own,
    clientFor: (callerKey) => new MemoryClient({ apiKey: callerKey, fetch: engine.fetch }),
    preloadSearch: () => {
      engine.preloadSearch().catch(() => {}); // a table that fails to read fails the search that needs it, with its message
    },
    close: () => engine.close(),
  };
}

/** Where the API lives, for a startup line: "embedded engine in DIR (embedder …, extractor …)" or "API URL". */
export function describeBackend(b: Backend): string {
  return b.mode === "embedded" ? `embedded engine in ${b.dataDir} (${b.models})` : `API ${b.apiUrl}`;
}

/** The embedded engine's models, as startup lines and `memctx status` name them. */
export function describeModels(models: Engine["models"]): string {
  return `embedder ${models.embedder}, extractor ${models.extractor}`;
}
