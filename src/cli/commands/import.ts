import { createReadStream, existsSync } from "node:fs";
import { type FlagOptions, parseFlags } from "../args.js";
import { CliError } from "../cli-error.js";
import type { Command } from "./command.js";
import { databaseUrlOf, embeddedDataDir, progressLine } from "./export.js";

/** The flags of `memctx import`, each one listed in its usage (a test holds them to it). */
const options = {
  "data-dir": { type: "string" },
  "database-url": { type: "string" },
} as const satisfies FlagOptions;

export const importCommand: Command = {
  name: "import",
  options,
  summary: "Read a memctx export into the embedded engine's data directory",
  usage: `
Usage: memctx import FILE [--data-dir DIR] [--database-url URL]

Reads a file written by \`memctx export\` (FILE, or - for standard input) into the embedded engine:
all of it or nothing. Records keep their ids, so each namespace of the file must be empty here.
Documents that were still processing are queued again. Other memctx processes on the same data
directory wait while it writes.

Options:
  --data-dir DIR  data directory (default: MEMCTX_DATA_DIR or the user data directory)
  --database-url URL  write PostgreSQL (as \`memctx serve --database-url\`) instead of the data
                  directory's SQLite file (default: MEMCTX_DATABASE_URL)
  -h, --help      show this help`,
  async run(argv) {
    const { values, positionals } = parseFlags("import", { args: argv, options, allowPositionals: true });
    const [file, ...extra] = positionals;
    if (!file || extra.length) throw new CliError("import takes one file (or - for standard input)");
    if (file !== "-" && !existsSync(file)) throw new CliError(`no such file: ${file}`);
    const dataDir = await embeddedDataDir(values["data-dir"], "import");
    const { openDatabase } = await import("../../engine/store/db.js");
    const { ImportError, importData } = await import("../../engine/export.js");
    const { LOCAL_ORGANIZATION } = await import("../../engine/store/organizations.js");
    // An import writes the search index of everything it brings: a cache sized for writing.
    const db = openDatabase(dataDir, { cache: "writes", databaseUrl: databaseUrlOf(values["database-url"]) });
    try {
      await importData(db, file === "-" ? process.stdin : createReadStream(file), {
        organization: LOCAL_ORGANIZATION,
        progress: progressLine("imported"),
      });
    } catch (err) {
      if (err instanceof ImportError) throw new CliError(`${file}: ${err.message}; nothing was imported`, 1);
      throw err;
    } finally {
      db.close();
    }
    return 0;
  },
};
