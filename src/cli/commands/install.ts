import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Namespace } from "../../api/index.js";
import { packageUrl } from "../../package-root.js";
import { VERSION } from "../../version.js";
import { didYouMean, type FlagOptions, parseFlags } from "../args.js";
import { CliError } from "../cli-error.js";
import type { Command } from "./command.js";

export const CLIENTS = ["claude-desktop", "claude-code", "cursor", "vscode"] as const;
export type McpClientName = (typeof CLIENTS)[number];

/** The name of the server entry in every client's configuration. */
export const SERVER_NAME = "memctx";

interface Platform {
  platform: NodeJS.Platform;
  home: string;
  env: NodeJS.ProcessEnv;
}

/** Where each client keeps its user-level MCP configuration, per platform. */
export function configPath(client: McpClientName, p: Platform): string {
  // An empty variable counts as unset (the XDG Base Directory rule).
  const appData = p.env.APPDATA || join(p.home, "AppData", "Roaming");
  const xdgConfig = p.env.XDG_CONFIG_HOME || join(p.home, ".config");
  const appSupport = join(p.home, "Library", "Application Support");
  switch (client) {
    case "claude-desktop":
      if (p.platform === "darwin") return join(appSupport, "Claude", "claude_desktop_config.json");
      if (p.platform === "win32") return join(appData, "Claude", "claude_desktop_config.json");
      return join(xdgConfig, "Claude", "claude_desktop_config.json");
    case "claude-code":
      // User scope: available in every project.
      return join(p.home, ".claude.json");
    case "cursor":
      return join(p.home, ".cursor", "mcp.json");
    case "vscode":
      if (p.platform === "darwin") return join(appSupport, "Code", "User", "mcp.json");
      if (p.platform === "win32") return join(appData, "Code", "User", "mcp.json");
      return join(xdgConfig, "Code", "User", "mcp.json");
  }
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

/** The server entry: this installation's `memctx mcp`, with the namespace and the API settings when given. */
export function serverEntry(
  client: McpClientName,
  opts: { namespace?: string; env: NodeJS.ProcessEnv; launch?: Launch },
) {
  const launch = opts.launch ?? currentLaunch();
  const args = [...launch.args, "mcp", ...(opts.namespace ? ["--namespace", opts.namespace] : [])];
  const env: Record<string, string> = {};
  for (const name of ["MEMCTX_DATA_DIR", "MEMCTX_API_URL", "MEMCTX_API_KEY"] as const) {
    const v = opts.env[name]?.trim();
    if (v) env[name] = v;
  }
  const entry = { command: launch.command, args, ...(Object.keys(env).length ? { env } : {}) };
  // Claude Code and VS Code name the transport; Claude Desktop and Cursor take stdio as given.
  return client === "claude-code" || client === "vscode" ? { type: "stdio", ...entry } : entry;
}

/** The key under which each client lists its servers. */
const serversKey = (client: McpClientName) => (client === "vscode" ? "servers" : "mcpServers");

/** The configuration with our entry set, everything else kept as it was. */
export function mergeConfig(
  existing: Record<string, unknown>,
  client: McpClientName,
  entry: Record<string, unknown>,
): Record<string, unknown> {
  const key = serversKey(client);
  const servers = existing[key];
  if (servers !== undefined && (typeof servers !== "object" || servers === null || Array.isArray(servers))) {
    throw new CliError(`"${key}" in the existing configuration is not an object; fix it by hand first`);
  }
  return {
    ...existing,
    [key]: { ...(servers as Record<string, unknown> | undefined), [SERVER_NAME]: entry },
  };
}

function readConfig(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  const text = readFileSync(file, "utf8");
  if (!text.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliError(
      `${file} is not plain JSON (${(err as Error).message}); nothing was changed. Add the entry by hand: run the same command with --print`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CliError(`${file} does not hold a JSON object; nothing was changed`);
  }
  return parsed as Record<string, unknown>;
}

export interface InstallResult {
  file: string;
  backup: string | undefined;
  config: Record<string, unknown>;
}

/** Writes the entry into the client's configuration, keeping a backup of what was there. */
export function installInto(
  client: McpClientName,
  entry: Record<string, unknown>,
  p: Platform,
): InstallResult {
  const file = configPath(client, p);
  const config = mergeConfig(readConfig(file), client, entry);
  let backup: string | undefined;
  if (existsSync(file)) {
    backup = `${file}.memctx-backup-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    copyFileSync(file, backup);
  }
  mkdirSync(dirname(file), { recursive: true });
  // Write beside and rename: a crash never leaves a half-written configuration.
  const tmp = `${file}.memctx-tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return { file, backup, config };
}

/** The flags of `memctx install`, each one listed in its usage (a test holds them to it). */
const options = {
  namespace: { type: "string" },
  print: { type: "boolean", default: false },
} as const satisfies FlagOptions;

export const install: Command = {
  name: "install",
  options,
  summary: "Add memctx to an MCP client's configuration (claude-desktop, claude-code, cursor, vscode)",
  usage: `
Usage: memctx install <claude-desktop|claude-code|cursor|vscode> [--namespace NS] [--print]

Adds a "${SERVER_NAME}" server to the client's user configuration, keeping every other entry and a
backup of the previous file (<file>.memctx-backup-<time>). The entry runs this installation: the
absolute path of this Node and of memctx's entry point (so a clone or a tarball works as is); run
through npx from npm's cache, it is \`npx -y memctx@${VERSION} mcp\`.
MEMCTX_DATA_DIR, MEMCTX_API_URL and MEMCTX_API_KEY, when set, are copied into the entry.

Options:
  --namespace NS   bind the server to NS (default: from the client's workspace roots, else "default")
  --print          print the entry and the file it belongs in; change nothing
  -h, --help       show this help`,
  async run(argv) {
    const { values, positionals } = parseFlags("install", { args: argv, options, allowPositionals: true });
    const [client, ...extra] = positionals;
    if (client && !(CLIENTS as readonly string[]).includes(client)) {
      throw new CliError(
        `install: unknown client '${client}'${didYouMean(client, CLIENTS)} (one of ${CLIENTS.join(", ")})`,
      );
    }
    if (!client || extra.length) throw new CliError(`install takes one client: ${CLIENTS.join(", ")}`);
    const name = client as McpClientName;
    if (values.namespace !== undefined) {
      const ok = Namespace.safeParse(values.namespace);
      if (!ok.success) throw new CliError(`--namespace: ${ok.error.issues[0]?.message}`);
    }
    const p: Platform = { platform: process.platform, home: homedir(), env: process.env };
    const entry = serverEntry(name, {
      ...(values.namespace ? { namespace: values.namespace } : {}),
      env: process.env,
    });
    if (values.print) {
      process.stdout.write(`# ${configPath(name, p)}\n`);
      process.stdout.write(`${JSON.stringify({ [serversKey(name)]: { [SERVER_NAME]: entry } }, null, 2)}\n`);
      return 0;
    }
    const res = installInto(name, entry, p);
    process.stdout.write(`memctx added to ${name}: ${res.file}\n`);
    if (res.backup) process.stdout.write(`previous configuration kept in ${res.backup}\n`);
    if (entry.env && "MEMCTX_API_KEY" in entry.env) {
      process.stdout.write(
        "note: the entry holds MEMCTX_API_KEY in plain text; the file is readable only by you\n",
      );
    }
    process.stdout.write(`restart ${name} to load it\n`);
    return 0;
  },
};
