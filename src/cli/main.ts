#!/usr/bin/env node
/**
 * The memctx command's entry point. It imports only the version requirement: MCP clients start
 * servers with whatever Node the system has, and an older one would die on `node:sqlite` with a
 * stack trace. So the version is checked first and the real command (dispatch.ts) is loaded only after.
 */
import { NODE_REQUIRED, nodeSupported } from "./node-requirement.js";

const supported = nodeSupported(process.versions.node);
const first = process.argv[2];
// Help and the version need no SQLite: they answer on any Node.
const helpOnly =
  first === "--help" ||
  first === "-h" ||
  first === "help" ||
  first === "--version" ||
  first === "-v" ||
  process.argv.slice(3).some((a) => a === "--help" || a === "-h");

if (!supported && !helpOnly) {
  process.stderr.write(
    `memctx: needs Node.js ${NODE_REQUIRED.join(".")} or newer, but ${process.execPath} is ${process.version}; install a current Node (https://nodejs.org, or \`nvm install 24\`) and run memctx with it.\n`,
  );
  process.exit(1);
} else {
  // V8's compiled code of memctx and its dependencies is kept on disk (Node's own cache, in the
  // temp directory): a client starts the server often, and compiling ~500 modules again each time
  // is a good part of the start. Node < 22.1 lacks it; a cache that cannot be written is skipped.
  const { enableCompileCache } = await import("node:module");
  enableCompileCache?.();
  await import("./dispatch.js");
}
