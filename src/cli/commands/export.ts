import { once } from "node:events";
import { createWriteStream, renameSync, rmSync } from "node:fs";
import { Namespace } from "../../api/index.js";
import { type FlagOptions, parseFlags } from "../args.js";
import { setting } from "../backend.js";
import { CliError } from "../cli-error.js";
import type { Command } from "./command.js";

/** "documents 12, memories 40, …": what a progress line and the last line say. */
export const describeCounts = (counts: Readonly<Record<string, number>>) =>
  Object.entries(counts)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(", ") || "nothing";

/** Progress on standard error: rewritten in place on a terminal, a line at the end otherwise. */
export function progressLine(verb: string) {
  return (counts: Readonly<Record<string, number>>, done: boolean) => {
    if (process.stderr.isTTY)
      process.stderr.write(`\r\x1b[Kmemctx: ${verb} ${describeCounts(counts)}${done ? "\n" : ""}`);
    else if (done) process.stderr.write(`memctx: ${verb} ${describeCounts(counts)}\n`);
  };
}

/** The embedded engine's data directory; export and import read and write its file directly. */
export async function embeddedDataDir(flag: string | undefined, command: string): Promise<string> {
  if (setting(process.env, "MEMCTX_API_URL") && !flag) {
    throw new CliError(
      `${command} works on the embedded engine's data directory; MEMCTX_API_URL is set: unset it, or pass --data-dir`,
    );
  }
  const { defaultDataDir } = await import("../../engine/data-dir.js");
  return flag ?? defaultDataDir({ ...process.env, MEMCTX_DATA_DIR: setting(process.env, "MEMCTX_DATA_DIR") });
}

/** PostgreSQL's URL for export and import: the flag, else MEMCTX_DATABASE_URL; undefined: SQLite. */
export const databaseUrlOf = (flag: string | undefined): string | undefined =>
  flag ?? (setting(process.env, "MEMCTX_DATABASE_URL") || undefined);

/**
 * The output file, written under a temporary name beside it and renamed only once the export is
 * whole: a failed export (a namespace that does not exist, a read error, Ctrl-C) leaves no partial
 * file, and an earlier FILE stays as it was. Opened before anything is read: a wrong path is one
 * line, not a stack.
 */
async function openForWriting(file: string) {
  const partial = `${file}.${process.pid}.partial`;
  const stream = createWriteStream(partial);
  try {
    await once(stream, "open");
  } catch (err) {
    throw new CliError(`cannot write ${file}: ${(err as Error).message.replace(partial, file)}`, 1);
  }
  const closed = () =>
    new Promise<void>((resolve, reject) =>
      stream.end((err?: Error | null) => (err ? reject(err) : resolve())),
    );
  return {
    stream,
    /** Closes the file and gives it its name. */
    commit: async () => {
      await closed();
      renameSync(partial, file);
    },
    /** Closes and removes the file. */
    discard: async () => {
      await closed().catch(() => {});
      rmSync(partial, { force: true });
    },
  };
}

/** The flags of `memctx export`, each one listed in its usage (a test holds them to it). */
const options = {
  namespace: { type: "string" },
  out: { type: "string" },
  "data-dir": { type: "string" },
  "database-url": { type: "string" },
} as const satisfies FlagOptions;

export const exportCommand: Command = {
  name: "export",
  options,
  summary: "Write the embedded engine's memory to a JSON Lines file (documents, memories, profile)",
  usage: `
Usage: memctx export [--namespace NS] [--out FILE] [--data-dir DIR] [--database-url URL]

Writes every namespace (or one) of the embedded engine as JSON Lines: documents with their ids,
content, metadata and dates; chunks and memories with their vectors; memory versions, relations
and forgotten state; profile buckets; namespace and organization contexts. \`memctx import\` reads
it into another data directory. Keys, connectors and pending jobs stay behind. The format is
described in the README ("Export and import").

Options:
  --namespace NS  only this namespace
  --out FILE      write to FILE (default: standard output)
  --data-dir DIR  data directory (default: MEMCTX_DATA_DIR or the user data directory)
  --database-url URL  read PostgreSQL (as \`memctx serve --database-url\`) instead of the data
                  directory's SQLite file (default: MEMCTX_DATABASE_URL)
  -h, --help      show this help`,
  async run(argv) {
    const { values } = parseFlags("export", { args: argv, options });
    if (values.namespace !== undefined) {
      const ok = Namespace.safeParse(values.namespace);
      if (!ok.success) throw new CliError(`--namespace: ${ok.error.issues[0]?.message}`);
    }
    const dataDir = await embeddedDataDir(values["data-dir"], "export");
    const { existsSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { DATABASE_FILE, openDatabase } = await import("../../engine/store/db.js");
    const databaseUrl = databaseUrlOf(values["database-url"]);
    if (!databaseUrl && !existsSync(join(dataDir, DATABASE_FILE))) {
      throw new CliError(`${dataDir} holds no memctx data`, 1);
    }
    const { exportData } = await import("../../engine/export.js");
    const { LOCAL_ORGANIZATION } = await import("../../engine/store/organizations.js");
    const file = values.out ? await openForWriting(values.out) : undefined;
    const db = openDatabase(dataDir, { databaseUrl });
    let whole = false;
    const progress = progressLine("exported");
    let last: Readonly<Record<string, number>> = {};
    try {
      const counts = await exportData(db, file?.stream ?? process.stdout, {
        organization: LOCAL_ORGANIZATION,
        ...(values.namespace ? { namespace: values.namespace } : {}),
        // The last line waits for the namespace check: "exported …" then "nothing was exported" contradicts.
        progress: (counts, done) => {
          if (done) last = counts;
          else progress(counts, false);
        },
      });
      if (values.namespace && !counts.namespace) {
        throw new CliError(
          `namespace ${values.namespace} does not exist in ${databaseUrl ? "that database" : dataDir}; nothing was exported (\`memctx status\` lists the namespaces)`,
          1,
        );
      }
      progress(last, true);
      whole = true;
    } finally {
      db.close();
      if (file) await (whole ? file.commit() : file.discard());
    }
    return 0;
  },
};
