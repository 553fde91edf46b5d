import { describeSetting, formatBytes } from "../../engine/disk-reserve.js";
import { UI_PATH } from "../../ui/static-files.js";
import { VERSION } from "../../version.js";
import { type FlagOptions, parseFlags } from "../args.js";
import { describeModels } from "../backend.js";
import { CliError } from "../cli-error.js";
import { limitOptions, serverOptions } from "../server-options.js";
import type { Command } from "./command.js";

/** The flags of `memctx serve`, each one listed in its usage (a test holds them to it). */
const options = {
  port: { type: "string", default: "8787" },
  host: { type: "string", default: "127.0.0.1" },
  "data-dir": { type: "string" },
  workers: { type: "string" },
  "rate-limit": { type: "string" },
  "document-token-quota": { type: "string" },
  "disk-reserve": { type: "string" },
  "database-url": { type: "string" },
} as const satisfies FlagOptions;

export const serve: Command = {
  name: "serve",
  options,
  summary: "Serve the embedded engine's v5 API over HTTP",
  usage: `
Usage: memctx serve [--port 8787] [--host 127.0.0.1] [--data-dir DIR] [--workers N]
                    [--rate-limit N] [--document-token-quota N] [--disk-reserve SIZE]
                    [--database-url URL]

Serves the Memory and Context Service API v5 of the embedded engine over HTTP. Every request
needs a bearer API key. On the first start a key for the local organization is created and
printed once (keep it); with MEMCTX_API_KEY set, that key is registered instead.

Options:
  --port N        port to listen on (default 8787; 0 picks a free one)
  --host HOST     address to bind (default 127.0.0.1)
  --data-dir DIR  data directory (default: MEMCTX_DATA_DIR or the user data directory)
  --workers N     processing loops (default 2), in one thread per core but one (at least one);
                  0 leaves processing to other processes
  --rate-limit N  requests per minute that one API key may make (bursts up to N); over it a
                  request is answered 429 with Retry-After and changes nothing (default: no limit)
  --document-token-quota N
                  document tokens (4 characters of content each) one organization may hold; an
                  add or batch add that would pass it is answered 402 and adds nothing (default: none)
  --disk-reserve SIZE
                  free space kept on the data directory's file system (5%, 2GB, 512MiB; 0: none;
                  a share at least 64 MB), plus 7x the content queued for processing: below it new
                  documents, uploads, memories and syncs are answered 507, so that queued work can
                  finish; taken again once space is back (default: 5%; SQLite only)
  --database-url URL
                  keep the data in PostgreSQL (postgres://user:pass@host:5432/db) instead of the
                  data directory's SQLite file, so several replicas share it (default:
                  MEMCTX_DATABASE_URL)
  -h, --help      show this help

Environment:
  MEMCTX_API_KEY                  register this key for the local organization
  MEMCTX_DATABASE_URL             --database-url when the flag is not given
  MEMCTX_RATE_LIMIT               --rate-limit when the flag is not given (0: no limit)
  MEMCTX_DOCUMENT_TOKEN_QUOTA     --document-token-quota when the flag is not given (0: none)
  MEMCTX_DISK_RESERVE             --disk-reserve when the flag is not given (5%)
  MEMCTX_MAX_INFLATED_BYTES       bytes a Word document's archive may inflate to, in all (33554432)
  MEMCTX_MAX_INFLATED_ENTRY_BYTES bytes one part of it may inflate to (8388608)
  MEMCTX_FILE_MEMORY_MB           heap one PDF, Word or HTML file's conversion may use (512)
  MEMCTX_FILE_TIMEOUT_MS          how long one file's conversion may take (120000)
  MEMCTX_ALLOW_PRIVATE_NETWORK=1  let URL content reach private and loopback addresses
  MEMCTX_JOB_LEASE_MS             how long a crashed process's job waits before another takes it (30000)
  MEMCTX_SECRET_KEY               key sealing connector secrets at rest (base64 of 32 bytes, or any
                                  string, hashed to 32 bytes); default: secret.key in the data directory
  MEMCTX_THREADS=0                run processing in the serving thread instead of worker threads
  MEMCTX_EXTRACT_MAX_CHARS        memories come from a document's first N characters (200000)
  MEMCTX_DOCUMENT_MAX_MEMORIES    most memories one document gives (1000)`,
  async run(argv) {
    const { values } = parseFlags("serve", { args: argv, options });
    const { port, workers, dataDir, apiKey } = serverOptions(values);
    const limits = limitOptions(values);
    // Loaded here, not at the top: `memctx --help` must not load node:sqlite (older Node lacks it).
    const { startServer } = await import("../../engine/server.js");
    const databaseUrl = values["database-url"] ?? (process.env.MEMCTX_DATABASE_URL || undefined);
    const server = await startServer({
      port,
      host: values.host,
      dataDir,
      databaseUrl,
      workers,
      apiKey,
      limits,
    }).catch((err) => {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE")
        throw new CliError(`${values.host}:${port} is already in use; pick another --port`, 1);
      if (code === "EADDRNOTAVAIL")
        throw new CliError(`cannot bind ${values.host}: no such local address`, 1);
      throw err;
    });
    const firstKey = process.env.MEMCTX_API_KEY ? null : await server.engine.createFirstKey();
    // "listening on" comes last: whoever waits for it has seen everything else.
    process.stdout.write(`memctx serve: data directory ${dataDir}\n`);
    if (firstKey) {
      process.stdout.write(
        `memctx serve: created an API key for the local organization (shown once, keep it):\n${firstKey}\n`,
      );
    }
    const database = await server.engine.database();
    process.stderr.write(
      `memctx ${VERSION}: v5 API on ${server.url}, embedded engine in ${dataDir} (${describeModels(server.engine.models)}; ${database.backend}, schema ${database.schema})\n`,
    );
    if (limits.requestsPerMinute !== null || limits.documentTokenQuota !== null) {
      const said = [
        limits.requestsPerMinute !== null ? `${limits.requestsPerMinute} requests per minute per key` : null,
        limits.documentTokenQuota !== null
          ? `${limits.documentTokenQuota} document tokens per organization`
          : null,
      ];
      process.stdout.write(`memctx serve: limits: ${said.filter(Boolean).join(", ")}\n`);
    }
    const disk = await server.engine.diskState();
    if (disk) {
      process.stdout.write(
        `memctx serve: disk reserve ${formatBytes(disk.reserve)} (${describeSetting(disk.setting)}): ` +
          `new content is refused (507) while less is free; ${formatBytes(disk.free)} free now\n`,
      );
    }
    // The page is served by every `serve`; without this line nobody learns it is there.
    process.stdout.write(
      `memctx serve: memory browser at ${server.url}${UI_PATH} (sign in with an API key of this server)\n`,
    );
    process.stdout.write(`memctx serve: listening on ${server.url}\n`);
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        process.stdout.write(`memctx serve: ${signal}, closing\n`);
        process.off("SIGINT", onInt);
        process.off("SIGTERM", onTerm);
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
