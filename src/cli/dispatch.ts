import { VERSION } from "../version.js";
import { didYouMean } from "./args.js";
import { CliError } from "./cli-error.js";
/**
 * The memctx command. Each subcommand lives in its own file under commands/ and exports
 * `{ name, summary, usage, run(argv) }`; this file only dispatches.
 */
import { commands, findCommand } from "./commands/index.js";

function help(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `memctx ${VERSION}: long-term memory for AI agents over the Model Context Protocol.`,
    "",
    "Usage: memctx [command] [options]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "With no command, memctx runs the MCP server over stdio (the same as `memctx mcp`).",
    "Run `memctx help <command>` (or `memctx <command> --help`) for a command's options.",
    "",
    "Environment:",
    "  MEMCTX_DATA_DIR      data directory of the embedded engine (default: the user data directory)",
    "  MEMCTX_API_URL       use a memctx serve instance or the hosted service instead of the embedded engine",
    "  MEMCTX_API_KEY       API key for MEMCTX_API_URL; registered for the local organization when serving",
    "  MEMCTX_NAMESPACE     namespace of the MCP session (default: from the client's roots, else 'default')",
    "  MEMCTX_EMBEDDINGS_URL, _MODEL, _API_KEY, _DIMENSIONS",
    "                       an OpenAI-compatible embeddings endpoint for vector search (default: the built-in word vectors)",
    "  MEMCTX_EMBEDDINGS    without a URL: word-vectors (built in, offline; the default) or none (lexical search only)",
    "  MEMCTX_LLM_URL, _MODEL, _API_KEY",
    "                       an OpenAI-compatible chat endpoint: memories extracted by that model (default: offline extractor)",
    "  MEMCTX_ALLOW_PRIVATE_NETWORK=1",
    "                       let URL content and connectors reach private and loopback addresses",
    "",
    "The README lists every setting, connector credentials included.",
    "",
  ].join("\n");
}

/** One line, not the whole help: the mistake, the nearest command, and where the list is. */
const unknownCommand = (name: string, what: string) =>
  new CliError(
    `${what} '${name}'${didYouMean(
      name,
      commands.map((c) => c.name),
    )} (memctx --help lists the commands)`,
  );

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") {
    // `memctx help mcp` is `memctx mcp --help`.
    const about = first === "help" && rest[0] !== undefined ? findCommand(rest[0]) : undefined;
    if (first === "help" && rest[0] !== undefined && !about) throw unknownCommand(rest[0], "no command");
    process.stdout.write(about ? `${about.usage.trim()}\n` : help());
    return 0;
  }
  if (first === "--version" || first === "-v") {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const command = findCommand(first === undefined || first.startsWith("-") ? "mcp" : first);
  if (!command) throw unknownCommand(first!, "unknown command");
  const args = first === undefined || first.startsWith("-") ? argv : rest;
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${command.usage.trim()}\n`);
    return 0;
  }
  return command.run(args);
}

// `memctx openapi | head` closes the pipe early: that is not an error.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof CliError) {
      process.stderr.write(`memctx: ${err.message}\n`);
      process.exitCode = err.exitCode;
    } else {
      process.stderr.write(`memctx: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    }
  },
);
