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
