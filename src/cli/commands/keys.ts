import { defaultDataDir } from "../../engine/data-dir.js";
import { didYouMean, type FlagOptions, parseFlags } from "../args.js";
import { CliError } from "../cli-error.js";
import type { Command } from "./command.js";

const ACTIONS = ["create", "list", "revoke"] as const;
const isAction = (a: string | undefined): a is (typeof ACTIONS)[number] =>
  (ACTIONS as readonly (string | undefined)[]).includes(a);

/** The flags of `memctx keys`, each one listed in its usage (a test holds them to it). */
const options = {
  org: { type: "string" },
  namespace: { type: "string", multiple: true },
  "read-only": { type: "boolean", default: false },
  "data-dir": { type: "string" },
  "database-url": { type: "string" },
} as const satisfies FlagOptions;

export const keys: Command = {
  name: "keys",
  options,
  summary: "Create, list and revoke API keys of the embedded engine",
  usage: `
Usage: memctx keys create [--org NAME] [--namespace NS]... [--read-only] [--data-dir DIR]
                          [--database-url URL]
       memctx keys list [--data-dir DIR] [--database-url URL]
       memctx keys revoke <prefix-or-key> [--data-dir DIR] [--database-url URL]

API keys of a memctx serve instance. Each key belongs to one organization, which sees only its
own namespaces. Only a hash of each key is stored: a created key is printed once.

Options:
  --org NAME        organization of the new key (default: local, the one memctx serve uses)
  --namespace NS    restrict the new key to this namespace (repeatable)
  --read-only       the new key may search, list and read, never write: every route that
                    adds, changes or forgets (and the MCP tools add_memory, forget,
                    connect_source connect / sync) answers it 403
  --data-dir DIR    data directory (default: MEMCTX_DATA_DIR or the user data directory)
  --database-url URL
                    the PostgreSQL database of memctx serve --database-url (default:
                    MEMCTX_DATABASE_URL)
  -h, --help        show this help`,
  async run(argv) {
    const { values, positionals } = parseFlags("keys", { args: argv, options, allowPositionals: true });
    const [action, target, ...extra] = positionals;
    // A mistyped action is told before the database is opened (and so before one is created).
    if (!isAction(action)) {
      throw new CliError(
        action
          ? `keys: unknown action '${action}'${didYouMean(action, ACTIONS)} (keys takes create, list or revoke)`
          : "keys needs an action: create, list or revoke",
      );
    }
    // Loaded here, not at the top: `memctx --help` must not load node:sqlite (older Node lacks it).
    const { openDatabase } = await import("../../engine/store/db.js");
    const { createKey, LOCAL_ORGANIZATION, listKeys, revokeKey } = await import(
      "../../engine/store/organizations.js"
    );
    const db = openDatabase(values["data-dir"] ?? defaultDataDir(), {
      databaseUrl: values["database-url"] ?? (process.env.MEMCTX_DATABASE_URL || undefined),
    });
    try {
      switch (action) {
        case "create": {
          if (target !== undefined) throw new CliError(`keys create takes no argument (got '${target}')`);
          process.stdout.write(
            `${createKey(db, values.org ?? LOCAL_ORGANIZATION, values.namespace ?? null, { readOnly: values["read-only"] })}\n`,
          );
          return 0;
        }
        case "list": {
          const rows = listKeys(db);
          if (!rows.length) process.stdout.write("no keys\n");
          for (const k of rows) {
            const scope = k.namespaces
              ? ` namespaces=${(JSON.parse(k.namespaces) as string[]).join(",")}`
              : "";
            const state = k.revoked_at ? `revoked ${k.revoked_at}` : "active";
            const used = k.last_used_at ? `last used ${k.last_used_at}` : "never used";
            const access = Number(k.read_only) === 1 ? "read-only" : "read-write";
            process.stdout.write(
              `${k.prefix}…  org=${k.organization}  ${access}  created ${k.created_at}  ${used}  ${state}${scope}\n`,
            );
          }
          return 0;
        }
        case "revoke": {
          if (!target || extra.length) throw new CliError("keys revoke takes one key or key prefix");
          try {
            process.stdout.write(`revoked ${revokeKey(db, target)}…\n`);
          } catch (err) {
            throw new CliError((err as Error).message, 1);
          }
          return 0;
        }
      }
    } finally {
      db.close();
    }
  },
};
