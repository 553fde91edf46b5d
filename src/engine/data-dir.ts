import { chmodSync, mkdirSync } from "node:fs";
import envPaths from "env-paths";

/**
 * Where the embedded engine keeps its SQLite file: MEMCTX_DATA_DIR, else the platform's user data
 * directory (XDG_DATA_HOME on Linux) + "/memctx".
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MEMCTX_DATA_DIR) return env.MEMCTX_DATA_DIR;
  // env-paths appends "-nodejs" unless told not to; the folder is "memctx" itself.
  return envPaths("memctx", { suffix: "" }).data;
}

/** The data directory is its owner's alone, whatever the process's umask. */
export const DATA_DIR_MODE = 0o700;

/**
 * Makes the data directory (and its parents) when missing, 0700; an existing directory keeps the
 * mode its owner chose. Every command that writes into it first (serve, mcp's key file) makes it here.
 */
export function makeDataDir(dir: string): void {
  if (mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE }) !== undefined) chmodSync(dir, DATA_DIR_MODE);
}
