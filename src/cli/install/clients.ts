import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { NAMESPACE_HEADER } from "../../mcp/http-settings.js";
import { packageUrl } from "../../package-root.js";
import { VERSION } from "../../version.js";
import { CliError } from "../cli-error.js";

export const CLIENTS = ["claude-desktop", "claude-code", "cursor", "vscode"] as const;
export type McpClientName = (typeof CLIENTS)[number];

/** The name of the server entry in every client's configuration. */
export const SERVER_NAME = "memctx";

/** The variable an HTTP entry names for its key where the client reads variables (Cursor, Claude Code). */
export const KEY_VARIABLE = "MEMCTX_API_KEY";

/** VS Code's input for the key: VS Code asks for it once and keeps it in its secret storage. */
export const VSCODE_KEY_INPUT = {
  type: "promptString",
  id: "memctx-api-key",
  description: "memctx API key (sent as Authorization: Bearer)",
  password: true,
} as const;

export interface Platform {
  platform: NodeJS.Platform;
  home: string;
  env: NodeJS.ProcessEnv;
}

/**
 * What differs between clients: where their files are, the key their servers sit under, whether an
 * entry names its transport, and how a header refers to a variable (each client's own syntax).
 */
interface ClientSpec {
  serversKey: "servers" | "mcpServers";
  userFile(p: Platform): string;
  /** The file in a project folder that the client reads beside the user's own; none for Claude Desktop. */
  projectFile?: (dir: string) => string;
  /** Claude Code and VS Code name the transport (`type`); Claude Desktop and Cursor take stdio as given. */
  namesTransport: boolean;
  /** The header value that stands for the key without holding it; undefined: the client has no HTTP entry. */
  keyReference?: string;
}

const SPECS: Record<McpClientName, ClientSpec> = {
  "claude-desktop": {
    serversKey: "mcpServers",
    userFile: (p) => {
      if (p.platform === "darwin") return join(appSupport(p), "Claude", "claude_desktop_config.json");
      if (p.platform === "win32") return join(appData(p), "Claude", "claude_desktop_config.json");
      return join(xdgConfig(p), "Claude", "claude_desktop_config.json");
    },
    namesTransport: false,
    // Its configuration file takes commands only; remote servers are added in the app (Connectors).
  },
  "claude-code": {
    serversKey: "mcpServers",
    // User scope: available in every project.
    userFile: (p) => join(p.home, ".claude.json"),
    projectFile: (dir) => join(dir, ".mcp.json"),
    namesTransport: true,
    keyReference: `Bearer \${${KEY_VARIABLE}}`,
  },
  cursor: {
    serversKey: "mcpServers",
    userFile: (p) => join(p.home, ".cursor", "mcp.json"),
    projectFile: (dir) => join(dir, ".cursor", "mcp.json"),
    namesTransport: false,
    keyReference: `Bearer \${env:${KEY_VARIABLE}}`,
  },
  vscode: {
    serversKey: "servers",
    userFile: (p) => {
      if (p.platform === "darwin") return join(appSupport(p), "Code", "User", "mcp.json");
      if (p.platform === "win32") return join(appData(p), "Code", "User", "mcp.json");
      return join(xdgConfig(p), "Code", "User", "mcp.json");
    },
    projectFile: (dir) => join(dir, ".vscode", "mcp.json"),
    namesTransport: true,
    keyReference: `Bearer \${input:${VSCODE_KEY_INPUT.id}}`,
  },
};

// An empty variable counts as unset (the XDG Base Directory rule).
const appData = (p: Platform) => p.env.APPDATA || join(p.home, "AppData", "Roaming");
const xdgConfig = (p: Platform) => p.env.XDG_CONFIG_HOME || join(p.home, ".config");
const appSupport = (p: Platform) => join(p.home, "Library", "Application Support");

/** The key under which each client lists its servers. */
export const serversKey = (client: McpClientName) => SPECS[client].serversKey;

/** Where each client keeps its user-level MCP configuration, per platform. */
export function configPath(client: McpClientName, p: Platform): string {
  return SPECS[client].userFile(p);
}

/** The client's configuration file inside project folder `dir`. */
export function projectConfigPath(client: McpClientName, dir: string): string {
  const file = SPECS[client].projectFile;
  if (!file) {
    throw new CliError(
      `${client} has no project configuration (only its user file); run the command without --project`,
    );
  }
  return file(dir);
}

/** How a client starts memctx: a program and the arguments before `mcp`. */
export interface Launch {
  command: string;
  args: string[];
}

/** Where npm keeps what `npx` fetched: an entry pointing there can vanish with the cache. */
const PACKAGE_CACHE = /[\\/](_npx|_cacache)[\\/]|[\\/]npm-cache[\\/]|[\\/]\.npm[\\/]/;

/**
 * The installation this command runs from: the absolute Node and entry point, so the client starts
 * exactly this build (a clone, a tarball, a global install) with a Node new enough for it. Run
 * through `npx` from the registry's cache, the pinned `npx -y memctx@<version>` is the lasting one.
 */
export function currentLaunch(
  run: { execPath: string; entry: string; version: string } = {
    execPath: process.execPath,
    entry: entryPoint(),
    version: VERSION,
  },
): Launch {
  if (PACKAGE_CACHE.test(run.entry)) return { command: "npx", args: ["-y", `memctx@${run.version}`] };
  return { command: run.execPath, args: [run.entry] };
}

/** The built entry point, dist/cli/main.js (from the sources, tsx, it must have been built). */
function entryPoint(): string {
  const built = fileURLToPath(packageUrl("dist/cli/main.js"));
  if (!existsSync(built))
    throw new CliError("run `npm run build` first: the entry points at dist/cli/main.js");
  return built;
}

export type Entry = Record<string, unknown>;

/** The stdio entry: this installation's `memctx mcp`, with the namespace and the API settings when given. */
export function serverEntry(
  client: McpClientName,
  opts: { namespace?: string; env: NodeJS.ProcessEnv; launch?: Launch },
): Entry {
  const launch = opts.launch ?? currentLaunch();
  const args = [...launch.args, "mcp", ...(opts.namespace ? ["--namespace", opts.namespace] : [])];
  const env: Record<string, string> = {};
  for (const name of ["MEMCTX_DATA_DIR", "MEMCTX_API_URL", "MEMCTX_API_KEY"] as const) {
    const v = opts.env[name]?.trim();
    if (v) env[name] = v;
  }
  const entry = { command: launch.command, args, ...(Object.keys(env).length ? { env } : {}) };
  return SPECS[client].namesTransport ? { type: "stdio", ...entry } : entry;
}

/**
 * The streamable HTTP entry: the URL and the key header. The header names the key through the
 * client's own reference (a variable, or VS Code's password input) unless `key` is given: then the
 * key itself is written (--write-key), for a client started where that variable is not set.
 */
export function httpEntry(
  client: McpClientName,
  opts: { url: string; namespace?: string; key?: string },
): Entry {
  const spec = SPECS[client];
  if (!spec.keyReference) {
    throw new CliError(
      `${client} takes no server URL in its configuration file: add ${opts.url} in the app (Settings > Connectors), or install the stdio entry (without --http) with MEMCTX_API_URL and MEMCTX_API_KEY set`,
    );
  }
  const headers: Record<string, string> = {
    Authorization: opts.key === undefined ? spec.keyReference : `Bearer ${opts.key}`,
    ...(opts.namespace ? { [canonicalHeader(NAMESPACE_HEADER)]: opts.namespace } : {}),
  };
  return { ...(spec.namesTransport ? { type: "http" } : {}), url: opts.url, headers };
}

/** Whether the client's HTTP entry asks VS Code for the key through an input. */
export const usesKeyInput = (client: McpClientName, entry: Entry) =>
  client === "vscode" &&
  (entry.headers as Record<string, string> | undefined)?.Authorization === SPECS.vscode.keyReference;

/** `x-memctx-namespace` -> `X-Memctx-Namespace`: as people write headers in files. */
const canonicalHeader = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash, c) => dash + c.toUpperCase());

/** A URL for --http: http or https, with the path of the MCP endpoint. */
export function checkHttpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(
      `--http: '${raw}' is not a URL; give the MCP endpoint, e.g. http://127.0.0.1:3333/mcp`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new CliError(`--http: '${raw}' must start with http:// or https://`);
  }
  return raw;
}
