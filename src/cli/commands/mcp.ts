import { join } from "node:path";
import { Namespace } from "../../api/index.js";
import { IDLE_TIMEOUT_DEFAULT_MS, MCP_PATH, NAMESPACE_HEADER } from "../../mcp/http-settings.js";
import { DEFAULT_NAMESPACE } from "../../mcp/roots.js";
import { VERSION } from "../../version.js";
import { type FlagOptions, parseFlags } from "../args.js";
import { type Backend, describeBackend, LOCAL_KEY_FILE, openBackend, setting } from "../backend.js";
import { CliError } from "../cli-error.js";
import type { Command } from "./command.js";

const usage = `
Usage: memctx mcp [--namespace NS] [--data-dir DIR] [--read-only]
       memctx mcp --http [--port 3333] [--host 127.0.0.1] [--idle-timeout MIN]
                  [--allowed-origin URL]... [--allowed-host HOST:PORT]...

Runs the memctx MCP server: over stdio (default; what MCP clients start), or over Streamable
HTTP at ${MCP_PATH} with --http. Plain \`memctx\` is the same as \`memctx mcp\`.

Where the API lives: MEMCTX_API_URL + MEMCTX_API_KEY (a memctx serve instance or the hosted
service), else the embedded engine on the data directory (MEMCTX_DATA_DIR or the user data dir).

Namespace:
  stdio   --namespace, else MEMCTX_NAMESPACE, else the client's first MCP root (the workspace
          folder's name plus a short hash of its path), else "${DEFAULT_NAMESPACE}".
  HTTP    per session, at initialize: the ${NAMESPACE_HEADER} header or ?namespace=, else
          --namespace / MEMCTX_NAMESPACE / "${DEFAULT_NAMESPACE}". Each request needs
          Authorization: Bearer <key>; a key limited to some namespaces opens only those.
          The key: <data-dir>/${LOCAL_KEY_FILE} (created at the first start; the startup line
          prints its path), MEMCTX_API_KEY when set, or one from \`memctx keys create\`.

Options:
  --namespace NS        bind the session(s) to NS
  --data-dir DIR        data directory of the embedded engine
  --read-only           offer only search, get_profile and list
  --http                serve Streamable HTTP instead of stdio
  --port N              HTTP port (default 3333; 0 picks a free one)
  --host H              HTTP bind address (default 127.0.0.1)
  --idle-timeout MIN    close HTTP sessions idle this many minutes (default ${IDLE_TIMEOUT_DEFAULT_MS / 60_000})
  --allowed-origin URL  also accept browser requests from this Origin (repeatable)
  --allowed-host H:P    also accept this Host header, e.g. when bound to 0.0.0.0 (repeatable)
  -h, --help            show this help`;

/** Printed on a terminal: someone ran it by hand, and a silent stdio server looks hung. */
const TTY_HINT = `memctx: the MCP server is running over stdio and waits for an MCP client on standard input.
memctx: add it to a client with \`memctx install claude-desktop|claude-code|cursor|vscode\`, or see \`memctx --help\`.
memctx: press Ctrl+C to stop.
`;

function namespaceOption(value: string | undefined, from: string): string | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  const ok = Namespace.safeParse(v);
  if (!ok.success) throw new CliError(`${from} ${JSON.stringify(v)}: ${ok.error.issues[0]?.message}`);
  return v;
}

function intOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${name} must be a whole number, got ${value}`);
  return n;
}

/** Resolves when the process should stop: stdin closed, or SIGINT / SIGTERM. */
function untilStopped(extra?: Promise<void>): Promise<string> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
    extra?.then(() => resolve("closed"));
  });
}

async function runStdio(backend: Backend, namespace: string | undefined, readOnly: boolean): Promise<number> {
  // The SDK and the client load only when a server runs: help must answer on any Node.
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
  const { createMcpServer } = await import("../../mcp/server.js");
  const { namespaceFromRoots } = await import("../../mcp/roots.js");
  let namespaceSource: string | (() => Promise<string>) = namespace ?? DEFAULT_NAMESPACE;
  const server = createMcpServer({
    client: backend.client,
    // Replaced below when the namespace comes from the roots; read lazily by every call.
    namespace: () => (typeof namespaceSource === "string" ? namespaceSource : namespaceSource()),
    ...(backend.apiUrl ? { apiUrl: backend.apiUrl } : {}),
    readOnly,
    // Over stdio the server runs on the user's machine, as the user: add_memory may read their files.
    localFiles: true,
    log: (m) => process.stderr.write(`memctx: ${m}\n`),
  });
  if (namespace === undefined) namespaceSource = namespaceFromRoots(server.server);
  // Once the client is connected (initialize answered), the tables a search reads load in the
  // background: an agent's first search then finds them read. Chained: roots may listen too.
  const initialized = server.server.oninitialized;
  server.server.oninitialized = () => {
    initialized?.();
    backend.preloadSearch();
  };
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    const previous = server.server.onclose;
    server.server.onclose = () => {
      previous?.();
      resolve();
    };
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  // One line on stderr (stdout is the protocol's): which build, which data, which namespace.
  process.stderr.write(
    `memctx ${VERSION}: MCP server over stdio, ${describeBackend(backend)}, namespace ${namespace ?? `from the client's roots, else ${DEFAULT_NAMESPACE}`}\n`,
  );
  await untilStopped(closed);
  await server.close().catch(() => {});
  await backend.close();
  return 0;
}

async function runHttp(
  backend: Backend,
  flags: {
    hosts: string[];
    namespace: string | undefined;
    host: string;
    port: number;
    idleMinutes: number;
    origins: string[];
    readOnly: boolean;
  },
): Promise<number> {
  const log = (m: string) => process.stderr.write(`memctx: ${m}\n`);
  const { startHttpServer } = await import("../../mcp/http.js");
  const http = await startHttpServer({
    clientFor: backend.clientFor,
    defaultNamespace: flags.namespace ?? DEFAULT_NAMESPACE,
    host: flags.host,
    port: flags.port,
    ...(backend.apiUrl ? { apiUrl: backend.apiUrl } : {}),
    idleTimeoutMs: flags.idleMinutes * 60_000,
    allowedOrigins: flags.origins,
    allowedHosts: flags.hosts,
    keyHint: callerKeyHint(backend),
    readOnly: flags.readOnly,
    log,
  });
  process.stderr.write(
    `memctx ${VERSION}: MCP server on ${http.url}, ${describeBackend(backend)}, namespace per session (${NAMESPACE_HEADER} header or ?namespace=, else ${flags.namespace ?? DEFAULT_NAMESPACE})\n`,
  );
  log(`each request needs Authorization: Bearer <key>: ${operatorKeyHint(backend)}`);
  await untilStopped();
  await http.close();
  await backend.close();
  return 0;
}

/**
 * Where a remote caller is told to find a key (the 401, the OAuth resource metadata): it names no
 * path of this machine, which anyone who can reach the port would otherwise learn.
 */
function callerKeyHint(backend: Backend): string {
  if (backend.mode === "remote") return `a key of ${backend.apiUrl}`;
  return "ask whoever runs this server for a key (`memctx keys create` makes one)";
}

/** Where the operator finds a key, printed at start on this machine's own stderr: the file's path. */
function operatorKeyHint(backend: Backend): string {
  if (backend.mode === "remote") return `a key of ${backend.apiUrl}`;
  const own = setting(process.env, "MEMCTX_API_KEY")
    ? "MEMCTX_API_KEY"
    : `the key in ${join(backend.dataDir!, LOCAL_KEY_FILE)}`;
  return `${own}, or one from \`memctx keys create\``;
}

/** The flags of `memctx mcp`, each one listed in its usage (a test holds them to it). */
const options = {
  namespace: { type: "string" },
  "data-dir": { type: "string" },
  "read-only": { type: "boolean", default: false },
  http: { type: "boolean", default: false },
  port: { type: "string" },
  host: { type: "string", default: "127.0.0.1" },
  "idle-timeout": { type: "string" },
  "allowed-origin": { type: "string", multiple: true, default: [] },
  "allowed-host": { type: "string", multiple: true, default: [] },
} as const satisfies FlagOptions;

export const mcp: Command = {
  name: "mcp",
  options,
  summary: "Run the MCP server (stdio by default, --http for Streamable HTTP)",
  usage,
  async run(argv) {
    const { values } = parseFlags("mcp", { args: argv, options });
    const namespace =
      namespaceOption(values.namespace, "--namespace") ??
      namespaceOption(setting(process.env, "MEMCTX_NAMESPACE"), "MEMCTX_NAMESPACE");
    const dataDir = values["data-dir"]?.trim() || undefined;

    if (!values.http) {
      if (process.stdin.isTTY) process.stderr.write(TTY_HINT);
      const backend = await openBackend(process.env, dataDir ? { dataDir } : {});
      return runStdio(backend, namespace, values["read-only"]);
    }
    const port = intOption(values.port, "--port", 3333);
    const idleMinutes = intOption(values["idle-timeout"], "--idle-timeout", IDLE_TIMEOUT_DEFAULT_MS / 60_000);
    const backend = await openBackend(process.env, { ...(dataDir ? { dataDir } : {}), perCallerKeys: true });
    return runHttp(backend, {
      namespace,
      host: values.host,
      port,
      idleMinutes: Math.max(idleMinutes, 1),
      origins: values["allowed-origin"],
      hosts: values["allowed-host"],
      readOnly: values["read-only"],
    });
  },
};
