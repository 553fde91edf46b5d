import { Namespace } from "../../api/index.js";
import type { MemoryClient } from "../../client/index.js";
import { plural } from "../../plural.js";
import { type FlagOptions, parseFlags } from "../args.js";
import { type Backend, openBackend, setting } from "../backend.js";
import { CliError } from "../cli-error.js";
import type { MigrationCounts, MigrationSource, Progress } from "../migrate.js";
import type { Command } from "./command.js";

/** A non-terminal progress line every this many documents (a terminal gets one rewritten in place). */
const PROGRESS_EVERY = 25;
/** Retries of one add: a shared server answers 429 while a migration runs fast (Retry-After is honoured). */
const MIGRATE_MAX_RETRIES = 6;

/** Where one side of the migration lives: an API address, or an embedded engine's data directory. */
type Place = { kind: "url"; url: string } | { kind: "dir"; dir: string };

function place(value: string | undefined, option: string): Place {
  if (!value)
    throw new CliError(`${option} is required: an API address (http://…, https://…) or a data directory`);
  if (/^https?:\/\//i.test(value)) {
    try {
      new URL(value);
    } catch {
      throw new CliError(`${option}: not a URL: ${value}`);
    }
    return { kind: "url", url: value };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value))
    throw new CliError(`${option}: only http and https addresses, or a directory`);
  return { kind: "dir", dir: value };
}

const describe = (p: Place) => (p.kind === "url" ? p.url : `the embedded engine in ${p.dir}`);

function keyFor(p: Place, flag: string | undefined, envName: string, option: string): string | undefined {
  if (p.kind === "dir") return undefined;
  const key = flag ?? setting(process.env, envName);
  if (!key) throw new CliError(`${option} (or ${envName}) is required for ${p.url}`);
  return key;
}

const counted = (c: MigrationCounts) =>
  `copied ${c.copied}, skipped ${c.skipped} (already there), failed ${c.failed}`;

/** The flags of `memctx migrate`, each one listed in its usage (a test holds them to it). */
const options = {
  from: { type: "string" },
  to: { type: "string" },
  "from-key": { type: "string" },
  "to-key": { type: "string" },
  "from-api": { type: "string", default: "v5" },
  namespace: { type: "string", multiple: true },
  "to-namespace": { type: "string" },
  "dry-run": { type: "boolean", default: false },
  concurrency: { type: "string", default: "4" },
} as const satisfies FlagOptions;

export const migrateCommand: Command = {
  name: "migrate",
  options,
  summary: "Copy namespaces from one memory service to another (hosted, memctx serve, v3/v4-era, embedded)",
  usage: `
Usage: memctx migrate --from SOURCE --to TARGET [--namespace NS]... [--to-namespace NS]
                      [--from-api v5|v3] [--dry-run] [--concurrency N]

Copies the documents of one namespace, several, or all from SOURCE to TARGET: each with its id
(the source's caller-defined id, else its own id, becomes the target's id), content, metadata and
date (its document date, else when the source stored it). The target processes every document
again: chunks, vectors and memories are made there, with the target's own models. Namespaces keep
their supporting context. Run it again to resume: what the target already holds with the same
content is skipped, so an interrupted migration ends with every document present once.

SOURCE and TARGET are each an API address (a \`memctx serve\`, the hosted service) or a data
directory (the embedded engine, opened in this process; on a target, documents are queued there and
processed the next time memctx runs on that directory). A source speaks the v5 API, or with
--from-api v3 the v3/v4-era one (POST /v3/documents/list, GET /v3/documents/{id}; container tags
are namespaces). The target speaks v5.

Options:
  --from SOURCE         where the documents are: http(s)://… or a data directory
  --to TARGET           where they go: http(s)://… or a data directory
  --from-key KEY        API key of SOURCE (or MEMCTX_MIGRATE_FROM_KEY)
  --to-key KEY          API key of TARGET (or MEMCTX_MIGRATE_TO_KEY)
  --from-api v5|v3      the source's API generation (default v5)
  --namespace NS        copy only this namespace (repeatable; default: every namespace of SOURCE)
  --to-namespace NS     with one --namespace: its name on TARGET (default: the same name)
  --dry-run             read both sides and say what would be copied and skipped; write nothing
  --concurrency N       documents sent at once (default 4)
  -h, --help            show this help

Progress goes to standard error (a line every ${PROGRESS_EVERY} documents when not a terminal), the
last line says what was copied, skipped and failed. Exit status: 0 when nothing failed, 1 when some
documents could not be copied (each is named), 2 for a usage mistake. A target that answers 429
is waited for (its Retry-After); one that answers 402 (its document token limit) stops the run.

Keys on the command line are visible to other users of this machine: prefer the environment.`,
  async run(argv) {
    const { values } = parseFlags("migrate", { args: argv, options });
    const from = place(values.from, "--from");
    const to = place(values.to, "--to");
    const api = values["from-api"];
    if (api !== "v5" && api !== "v3") throw new CliError("--from-api must be v5 or v3");
    if (api === "v3" && from.kind === "dir")
      throw new CliError("--from-api v3 needs an address: a data directory speaks v5");
    const namespaces = values.namespace ?? [];
    for (const ns of [...namespaces, ...(values["to-namespace"] ? [values["to-namespace"]] : [])]) {
      const ok = Namespace.safeParse(ns);
      if (!ok.success) throw new CliError(`namespace '${ns}': ${ok.error.issues[0]?.message}`);
    }
    if (values["to-namespace"] && namespaces.length !== 1) {
      throw new CliError("--to-namespace needs exactly one --namespace");
    }
    const concurrency = Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
      throw new CliError("--concurrency must be a whole number from 1 to 64");
    }
    const same =
      (from.kind === "url" && to.kind === "url" && new URL(from.url).href === new URL(to.url).href) ||
      (from.kind === "dir" && to.kind === "dir" && (await samePath(from.dir, to.dir)));
    if (same && !values["to-namespace"]) throw new CliError("--from and --to are the same: nothing to copy");
    const fromKey = keyFor(from, values["from-key"], "MEMCTX_MIGRATE_FROM_KEY", "--from-key");
    const toKey = keyFor(to, values["to-key"], "MEMCTX_MIGRATE_TO_KEY", "--to-key");
    const dryRun = values["dry-run"];

    const opened: Backend[] = [];
    const clients: MemoryClient[] = [];
    try {
      let source: MigrationSource;
      const { legacySource } = await import("../legacy-source.js");
      const { migrate, v5Source } = await import("../migrate.js");
      if (api === "v3" && from.kind === "url") {
        source = legacySource({ baseUrl: from.url, apiKey: fromKey! });
      } else {
        // A source directory must exist (clientFor throws otherwise), so there is a client.
        const client = await clientFor(from, fromKey, { mustExist: true }, opened, clients);
        source = v5Source(client!);
      }
      const target = await clientFor(to, toKey, { mustExist: false, dryRun }, opened, clients);
      if (!target) {
        // A dry run into a data directory that does not exist yet: everything would be copied.
        process.stderr.write(`memctx migrate: ${describe(to)} holds no data yet\n`);
      }
      process.stderr.write(
        `memctx migrate: ${dryRun ? "dry run, " : ""}from ${describe(from)} (${api}) to ${describe(to)}\n`,
      );
      const counts = await migrate({
        source,
        target,
        namespaces,
        ...(values["to-namespace"] ? { targetNamespace: values["to-namespace"] } : {}),
        dryRun,
        concurrency,
        onProgress: progress(dryRun),
        onFailure: (ns, key, reason) =>
          process.stderr.write(`memctx migrate: ${ns}/${key} not copied: ${reason}\n`),
      });
      const verb = dryRun ? "would copy" : "done";
      process.stderr.write(
        `memctx migrate: ${verb}: ${plural(counts.namespaces, "namespace")}, ${
          dryRun ? counted(counts).replace("copied", "to copy") : counted(counts)
        }\n`,
      );
      if (counts.stopped) {
        process.stderr.write(
          `memctx migrate: stopped: ${counts.stopped}; once the target has room, run the same command again (what is there is skipped)\n`,
        );
      }
      if (!dryRun && to.kind === "dir" && counts.copied > 0) {
        process.stderr.write(
          `memctx migrate: the documents are queued in ${to.dir}; memctx processes them the next time it runs there (mcp, serve or ui)\n`,
        );
      }
      return counts.failed > 0 ? 1 : 0;
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      for (const b of opened) await b.close();
    }
  },
};

async function samePath(a: string, b: string): Promise<boolean> {
  const { resolve } = await import("node:path");
  return resolve(a) === resolve(b);
}

/**
 * A client of one side: over HTTP for an address; for a data directory, the embedded engine
 * opened here without processing loops (a source only reads; a target's jobs wait in its store).
 * Undefined for a dry run's target directory that holds no data (nothing is created).
 */
async function clientFor(
  p: Place,
  key: string | undefined,
  opts: { mustExist: boolean; dryRun?: boolean },
  opened: Backend[],
  clients: MemoryClient[],
): Promise<MemoryClient | null> {
  if (p.kind === "url") {
    const { MemoryClient } = await import("../../client/index.js");
    const client = new MemoryClient({ baseUrl: p.url, apiKey: key!, maxRetries: MIGRATE_MAX_RETRIES });
    clients.push(client);
    return client;
  }
  const { existsSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { DATABASE_FILE } = await import("../../engine/store/db.js");
  if (!existsSync(join(p.dir, DATABASE_FILE))) {
    if (opts.mustExist) throw new CliError(`${p.dir} holds no memctx data`, 1);
    if (opts.dryRun) return null;
  }
  // The data directory's own key (mcp-local.key), as every embedded command uses: no key is added.
  const backend = await openBackend(
    { ...process.env, MEMCTX_API_URL: "", MEMCTX_API_KEY: "" },
    { dataDir: p.dir, workers: 0 },
  );
  opened.push(backend);
  return backend.client;
}

function progress(dryRun: boolean) {
  let printed = 0;
  return (p: Progress) => {
    const of = p.total === undefined ? plural(p.done, "document") : `${p.done}/${p.total} documents`;
    const line = `memctx migrate: ${p.namespace} ${of}; ${counted(p.counts)}${dryRun ? " (dry run)" : ""}`;
    if (process.stderr.isTTY) {
      process.stderr.write(`\r\x1b[K${line}${p.finished ? "\n" : ""}`);
    } else if (p.finished || Math.floor(p.done / PROGRESS_EVERY) > Math.floor(printed / PROGRESS_EVERY)) {
      printed = p.finished ? 0 : p.done;
      process.stderr.write(`${line}\n`);
    }
  };
}
