/**
 * `npm start`: builds only when something the build reads changed since the last build that
 * passed, then runs the built command in this process. The full tsc build takes 20-35 s; with
 * dist/ current, `npm start` costs what memctx itself costs.
 *
 * Plain JavaScript: it runs before anything is built. The build's output goes to standard error,
 * so standard output stays the MCP server's (stdio).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Touched after each build that passed, dated when that build began: an edit during it counts. */
const STAMP = join(ROOT, "dist", ".build-stamp");
const ENTRY = join(ROOT, "dist", "cli", "main.js");
/** What the build reads. A directory's own time counts too: a file deleted or renamed changes it. */
const INPUTS = [
  "src",
  "scripts/bundle-cli.mjs",
  "tsconfig.json",
  "tsconfig.build.json",
  "package.json",
  "package-lock.json",
];

/** The latest modification time under `path` (0 when it does not exist). */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

const built = existsSync(ENTRY) ? (statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0) : 0;
const changed = Math.max(...INPUTS.map((p) => newest(join(ROOT, p))));
if (changed > built) {
  process.stderr.write(
    built
      ? "memctx: the sources changed since the last build; building…\n"
      : "memctx: first start; building…\n",
  );
  const began = new Date();
  // npm runs this script and says where its own CLI is; `npm run build` stays the one build recipe.
  const npm = process.env.npm_execpath;
  const res = npm
    ? spawnSync(process.execPath, [npm, "run", "build", "--silent"], { cwd: ROOT, stdio: ["ignore", 2, 2] })
    : spawnSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: ["ignore", 2, 2], shell: true });
  if (res.status !== 0) {
    process.stderr.write("memctx: the build failed (above); fix it and run npm start again\n");
    process.exit(res.status ?? 1);
  }
  writeFileSync(STAMP, "");
  utimesSync(STAMP, began, began);
}

await import(pathToFileURL(ENTRY).href);
