import { statSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { Namespace } from "../../api/index.js";
import { VERSION } from "../../version.js";
import { didYouMean, type FlagOptions, parseFlags } from "../args.js";
import { CliError } from "../cli-error.js";
import {
  CLIENTS,
  checkHttpUrl,
  configPath,
  type Entry,
  httpEntry,
  KEY_VARIABLE,
  type McpClientName,
  type Platform,
  projectConfigPath,
  SERVER_NAME,
  serverEntry,
  serversKey,
  usesKeyInput,
  VSCODE_KEY_INPUT,
} from "../install/clients.js";
import type { Command } from "./command.js";

/** The flags of `memctx install`, each one listed in its usage (a test holds them to it). */
const options = {
  namespace: { type: "string" },
  project: { type: "boolean", default: false },
  http: { type: "string" },
  key: { type: "string" },
  "write-key": { type: "boolean", default: false },
  print: { type: "boolean", default: false },
} as const satisfies FlagOptions;

/** What an install writes: where, the entry, and whether it holds a key. */
interface Plan {
  client: McpClientName;
  file: string;
  project: boolean;
  entry: Entry;
  inputs: { id: string; [k: string]: unknown }[];
  secret: boolean;
}

export const install: Command = {
  name: "install",
  options,
  summary: "Add memctx to an MCP client's configuration (claude-desktop, claude-code, cursor, vscode)",
  usage: `
Usage: memctx install <claude-desktop|claude-code|cursor|vscode> [--project [DIR]]
                      [--http URL [--write-key [--key KEY]]] [--namespace NS] [--print]

Adds a "${SERVER_NAME}" server to the client's configuration, keeping every other entry, every comment
(VS Code's mcp.json is JSON with comments) and a backup of the previous file
(<file>.memctx-backup-<time>).

Where it goes:
  the user's configuration (default): claude-desktop's claude_desktop_config.json, cursor's
  ~/.cursor/mcp.json, vscode's user mcp.json; claude-code through \`claude mcp add --scope user\`
  when claude is on PATH (Claude Code rewrites ~/.claude.json itself), else into ~/.claude.json.
  With --project, the project's file in DIR: vscode .vscode/mcp.json, cursor .cursor/mcp.json,
  claude-code .mcp.json (claude-desktop has none).

What the entry runs:
  without --http, this installation over stdio: the absolute path of this Node and of memctx's
  entry point (so a clone or a tarball works as is); run through npx from npm's cache, it is
  \`npx -y memctx@${VERSION} mcp\`. MEMCTX_DATA_DIR, MEMCTX_API_URL and MEMCTX_API_KEY, when set,
  are copied into the entry.
  With --http URL, a memctx MCP server over streamable HTTP (\`memctx mcp --http\`), its key sent as
  Authorization: Bearer. The file holds no key: vscode asks for it once (a password input) and keeps
  it in its secret storage; cursor and claude-code read ${KEY_VARIABLE} from the environment they
  start in. claude-desktop takes URLs only in the app (Settings > Connectors).

Options:
  --project [DIR]  write the project's file in DIR (default: the current directory)
  --http URL       an entry for the streamable HTTP server at URL (e.g. http://127.0.0.1:3333/mcp)
  --write-key      with --http: write the key itself into the entry (the file is then readable by
                   you only), for a client started where ${KEY_VARIABLE} is not set
  --key KEY        the key --write-key writes (default: ${KEY_VARIABLE})
  --namespace NS   bind the server to NS (over HTTP, the X-Memctx-Namespace header; default: from
                   the client's workspace roots, else "default")
  --print          print the entry and the file it belongs in (for claude-code also the claude
                   command); change nothing
  -h, --help       show this help

Examples:
  memctx install vscode
  memctx install cursor --project ~/src/app --namespace app
  memctx install claude-code --http http://127.0.0.1:3333/mcp`,
  async run(argv) {
    const { values, positionals, projectDir } = parseInstallArgs(argv);
    const [client, dir, ...extra] = positionals;
    if (client && !(CLIENTS as readonly string[]).includes(client)) {
      throw new CliError(
        `install: unknown client '${client}'${didYouMean(client, CLIENTS)} (one of ${CLIENTS.join(", ")})`,
      );
    }
    if (!client) throw new CliError(`install takes one client: ${CLIENTS.join(", ")}`);
    if (extra.length || (dir !== undefined && (!values.project || projectDir !== undefined))) {
      throw new CliError(
        `install takes one client, and a folder only after --project (memctx install --help lists every option)`,
      );
    }
    const plan = planInstall(client as McpClientName, values, projectDir ?? dir);
    if (values.print) {
      await printPlan(plan);
      return 0;
    }
    return await applyPlan(plan, values);
  },
};

/** parseArgs, with `--project=DIR` taken apart first (the flag's folder is optional, so it is a switch). */
function parseInstallArgs(argv: string[]) {
  let projectDir: string | undefined;
  const args = argv.map((a) => {
    if (!a.startsWith("--project=")) return a;
    projectDir = a.slice("--project=".length);
    return "--project";
  });
  const parsed = parseFlags("install", { args, options, allowPositionals: true });
  return { ...parsed, projectDir };
}

type Values = ReturnType<typeof parseInstallArgs>["values"];

function planInstall(client: McpClientName, values: Values, dir: string | undefined): Plan {
  const namespace = values.namespace;
  if (namespace !== undefined) {
    const ok = Namespace.safeParse(namespace);
    if (!ok.success) throw new CliError(`--namespace: ${ok.error.issues[0]?.message}`);
  }
  if ((values.key !== undefined || values["write-key"]) && values.http === undefined) {
    throw new CliError(
      "--key and --write-key go with --http URL (a stdio entry takes MEMCTX_API_KEY as set)",
    );
  }
  if (values.key !== undefined && !values["write-key"]) {
    throw new CliError(
      `--key: the entry reads the key from ${client === "vscode" ? "VS Code's password input" : KEY_VARIABLE} and never holds it; add --write-key to write it into the file instead`,
    );
  }
  const key = values["write-key"] ? (values.key ?? process.env[KEY_VARIABLE])?.trim() : undefined;
  if (values["write-key"] && !key) {
    throw new CliError(
      `--write-key needs the key: --key KEY or ${KEY_VARIABLE} (memctx keys create makes one)`,
    );
  }
  const p: Platform = { platform: process.platform, home: homedir(), env: process.env };
  const file = values.project ? projectConfigPath(client, projectFolder(dir)) : configPath(client, p);
  const entry =
    values.http !== undefined
      ? httpEntry(client, {
          url: checkHttpUrl(values.http),
          ...(namespace ? { namespace } : {}),
          ...(key ? { key } : {}),
        })
      : serverEntry(client, { ...(namespace ? { namespace } : {}), env: process.env });
  const inputs = usesKeyInput(client, entry) ? [{ ...VSCODE_KEY_INPUT }] : [];
  const env = (entry.env ?? {}) as Record<string, string>;
  return {
    client,
    file,
    project: values.project,
    entry,
    inputs,
    secret: Boolean(key) || KEY_VARIABLE in env,
  };
}

function projectFolder(dir: string | undefined): string {
  const folder = resolve(dir ?? ".");
  let isDir = false;
  try {
    isDir = statSync(folder).isDirectory();
  } catch {}
  if (!isDir) throw new CliError(`--project: ${folder} is not a folder; give the project's folder`);
  return folder;
}

/** The entry as it sits in the file (VS Code's key input beside it), and Claude Code's own command. */
async function printPlan(plan: Plan) {
  const { claudeAddArgs, shellQuote } = await import("../install/claude-cli.js");
  const piece = {
    [serversKey(plan.client)]: { [SERVER_NAME]: plan.entry },
    ...(plan.inputs.length ? { inputs: plan.inputs } : {}),
  };
  process.stdout.write(`# ${plan.file}\n${JSON.stringify(piece, null, 2)}\n`);
  if (plan.client === "claude-code" && !plan.project) {
    const command = ["claude", ...claudeAddArgs(plan.entry)].map(shellQuote).join(" ");
    process.stdout.write(`# or through Claude Code itself:\n${command}\n`);
  }
}

async function applyPlan(plan: Plan, values: Values): Promise<number> {
  // Loaded here: the JSONC editor is needed by this command only, not at every `memctx mcp` start.
  const [{ backUp, writeEntry }, { addWithClaude, findClaude }] = await Promise.all([
    import("../install/config-file.js"),
    import("../install/claude-cli.js"),
  ]);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const claude = plan.client === "claude-code" && !plan.project ? findClaude(process.env) : undefined;
  let backup: string | undefined;
  if (claude) {
    backup = backUp(plan.file);
    addWithClaude(claude, plan.entry);
    out(`memctx added to claude-code with \`${claude} mcp add --scope user\``);
  } else {
    const change = {
      serversKey: serversKey(plan.client),
      name: SERVER_NAME,
      entry: plan.entry,
      inputs: plan.inputs,
    };
    backup = writeEntry(plan.file, change, plan.secret).backup;
    out(`memctx added to ${plan.client}: ${plan.file}`);
  }
  if (backup) out(`previous configuration kept in ${backup}`);
  for (const note of notes(plan, values, claude !== undefined)) out(`note: ${note}`);
  out(`restart ${plan.client} to load it`);
  return 0;
}

/** What the user must know about the entry just written: where its key comes from, what it names. */
function notes(plan: Plan, values: Values, viaClaude: boolean): string[] {
  const notes: string[] = [];
  if (plan.secret) {
    const what = values.http === undefined ? KEY_VARIABLE : "the key";
    notes.push(
      viaClaude
        ? `Claude Code keeps ${what} in plain text in ${plan.file}`
        : `the entry holds ${what} in plain text; the file is readable only by you`,
    );
  } else if (values.http !== undefined && plan.inputs.length) {
    notes.push(
      "VS Code asks for the key when it first starts the server, and keeps it in its secret storage",
    );
  } else if (values.http !== undefined) {
    notes.push(
      `the entry reads the key from ${KEY_VARIABLE}: set it where ${plan.client} starts${process.env[KEY_VARIABLE] ? "" : ` (it is not set here; memctx keys create makes one)`}, or run again with --write-key`,
    );
  }
  if (plan.project && values.http === undefined) {
    notes.push(
      "the entry names this machine's Node and memctx; for a file shared in a repository, --http suits every machine",
    );
  }
  return notes;
}
