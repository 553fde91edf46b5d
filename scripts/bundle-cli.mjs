/**
 * The memctx command as a few bundled files (dist/cli/main.js and dist/cli/chunks/), run by
 * `npm run build` after tsc. An MCP client starts `memctx mcp` often and waits for its first
 * answer; loading ~590 modules one by one (resolution, package.json look-ups, one compile each)
 * was the largest part of that start. Dynamic imports stay separate chunks, so a command loads
 * only what it runs. The rest of dist/ (tsc's) stays as it is: the library entry points, the
 * processing thread and the file-conversion process load from there. Runs after tsc: the
 * tools/list answer is converted once here, from tsc's build, and inlined.
 *
 * Plain JavaScript, like scripts/start.mjs: it runs in the build.
 */
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

// The tools/list entries, converted from tsc's build of the same sources (src/mcp/tool-list.ts).
const { tools } = await import(`${ROOT}/dist/mcp/tools/index.js`);
const { toolListEntry } = await import(`${ROOT}/dist/mcp/tool-list.js`);
const toolList = Object.fromEntries(tools.map((t) => [t.name, toolListEntry(t)]));

// Old chunks have other hashes: start from none. tsc's map of main.js maps tsc's main.js, not this one.
rmSync(`${ROOT}/dist/cli/chunks`, { recursive: true, force: true });
rmSync(`${ROOT}/dist/cli/main.js.map`, { force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: { "cli/main": "src/cli/main.ts" },
  outdir: "dist",
  chunkNames: "cli/chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  // Loaded only for some documents or setups, large, or with files of their own (pdf.js's worker):
  // they load from node_modules when needed, as from tsc's build.
  external: [
    "pg",
    "pg-native",
    "unpdf",
    "mammoth",
    "undici",
    "html-to-text",
    "wink-nlp",
    "wink-eng-lite-web-model",
    // Its main build is UMD, which requires its own files by a name the bundler cannot follow.
    "jsonc-parser",
  ],
  // CommonJS dependencies (ajv, pg's) call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __memctxRequire } from 'node:module'; const require = __memctxRequire(import.meta.url);",
  },
  // A string, parsed at run time: an object here would become a module that every chunk initializes.
  define: { MEMCTX_TOOL_LIST: JSON.stringify(JSON.stringify(toolList)) },
  legalComments: "none",
  logLevel: "warning",
});
