import { spawn } from "node:child_process";
import type { UiLaunch } from "../../ui/launch.js";
import { type FlagOptions, parseFlags } from "../args.js";
import { CliError } from "../cli-error.js";
import { serverOptions } from "../server-options.js";
import type { Command } from "./command.js";

/** The flags of `memctx ui`, each one listed in its usage (a test holds them to it). */
const options = {
  port: { type: "string", default: "0" },
  "data-dir": { type: "string" },
  workers: { type: "string" },
  "no-browser": { type: "boolean", default: false },
} as const satisfies FlagOptions;

export const ui: Command = {
  name: "ui",
  options,
  summary: "Browse, search, correct and forget memories in a web page (local engine)",
  usage: `
Usage: memctx ui [--port 0] [--data-dir DIR] [--workers N] [--no-browser]

Starts the embedded engine on 127.0.0.1 and opens the memory browser in your web browser: the
namespaces and their counts, each namespace's profile, memories (newest first, with their version
history and source document), documents with their chunks, connectors, and search. From the page
you can forget a memory, forget by meaning (after a dry run), delete a document, add a note, edit
a namespace's supporting context and start a connector sync.

The page is opened with a one-time token in its URL. The page trades it for an API key created for
this run (kept only in the tab's session storage; the token is removed from the address bar) and
every action goes through the v5 API with that key. The key is revoked when memctx ui stops
(Ctrl-C). The same page is served by memctx serve at /ui, where you type an API key instead.

Options:
  --port N        port to listen on (default 0: a free one)
  --data-dir DIR  data directory (default: MEMCTX_DATA_DIR or the user data directory)
  --workers N     background processing loops (default 2; 0 leaves processing to other processes)
  --no-browser    print the page's address instead of opening a browser
  -h, --help      show this help

Environment:
  MEMCTX_API_KEY  also register this key for the local organization (as memctx serve does)

Examples:
  memctx ui                                  the default data directory, a free port
  memctx ui --data-dir ./memory --port 8788 --no-browser`,
  async run(argv) {
    const { values } = parseFlags("ui", { args: argv, options });
    const { port, workers, dataDir, apiKey } = serverOptions(values);

    // Loaded here, not at the top: `memctx --help` must work on a Node without node:sqlite.
    const [{ startServer }, { revokeKey }, { createUiLaunch }] = await Promise.all([
      import("../../engine/server.js"),
      import("../../engine/store/organizations.js"),
      import("../../ui/launch.js"),
    ]);
    // The key needs the open engine; until it exists, /ui/session falls through to the API (401).
    let launch: UiLaunch | undefined;
    const host = "127.0.0.1";
    const server = await startServer({
      port,
      host,
      dataDir,
      workers,
      apiKey,
      wrap: (engineFetch) => (req) => (launch ? launch.wrap(engineFetch)(req) : engineFetch(req)),
    }).catch((err) => {
      if ((err as NodeJS.ErrnoException).code === "EADDRINUSE")
        throw new CliError(`${host}:${port} is already in use; pick another --port`, 1);
      throw err;
    });
    const key = server.engine.createKey();
    launch = createUiLaunch(key);
    const url = launch.url(server.url);
    process.stdout.write(`memctx ui: data directory ${dataDir}\n`);
    process.stdout.write(`memctx ui: open ${url}\n`);
    process.stdout.write("memctx ui: the link works once; Ctrl-C stops the server and revokes its key\n");
    if (!values["no-browser"]) openBrowser(url);

    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        process.stdout.write(`memctx ui: ${signal}, closing\n`);
        process.off("SIGINT", onInt);
        process.off("SIGTERM", onTerm);
        try {
          revokeKey(server.engine.context.db, key);
        } catch {
          // Already revoked by hand (memctx keys revoke): nothing left to do.
        }
        server.close().then(resolve, resolve);
      };
      const onInt = () => stop("SIGINT");
      const onTerm = () => stop("SIGTERM");
      process.on("SIGINT", onInt);
      process.on("SIGTERM", onTerm);
    });
    return 0;
  },
};

/** The platform's own opener; when there is none (a server, a container), the printed link stays. */
function openBrowser(url: string): void {
  const [cmd, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(cmd, args, { stdio: "ignore", detached: true });
    child.on("error", () =>
      process.stdout.write("memctx ui: no browser opener found; open the link above\n"),
    );
    child.unref();
  } catch {
    process.stdout.write("memctx ui: no browser opener found; open the link above\n");
  }
}
