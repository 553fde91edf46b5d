/**
 * Claude Code through its own command. Claude Code rewrites ~/.claude.json while it runs (project
 * state, counters), so an entry written into the file beside it can be lost or clash; `claude mcp
 * add --scope user` goes through Claude Code itself. The file is the fallback when `claude` is not
 * on PATH.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { CliError } from "../cli-error.js";
import { type Entry, SERVER_NAME } from "./clients.js";

/** The `claude` executable on PATH, or undefined. */
export function findClaude(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform) {
  // Windows: npm installs claude.cmd, the native installer claude.exe.
  const names = platform === "win32" ? ["claude.exe", "claude.cmd"] : ["claude"];
  for (const dir of (env.PATH ?? env.Path ?? "").split(delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      const file = join(dir, name);
      try {
        if (!statSync(file).isFile()) continue;
        accessSync(file, constants.X_OK);
        return file;
      } catch {}
    }
  }
  return undefined;
}

/**
 * `claude mcp add`'s arguments for an entry. Every option comes before `--`, and the server's name,
 * command (or URL) and arguments after it: `--env` and `--header` take several values, so a name
 * right after them would be read as one more.
 */
export function claudeAddArgs(entry: Entry): string[] {
  const options = ["--scope", "user"];
  if (typeof entry.url === "string") {
    options.push("--transport", "http");
    for (const [k, v] of Object.entries((entry.headers ?? {}) as Record<string, string>)) {
      options.push("--header", `${k}: ${v}`);
    }
    return ["mcp", "add", ...options, "--", SERVER_NAME, entry.url];
  }
  options.push("--transport", "stdio");
  for (const [k, v] of Object.entries((entry.env ?? {}) as Record<string, string>)) {
    options.push("--env", `${k}=${v}`);
  }
  return ["mcp", "add", ...options, "--", SERVER_NAME, String(entry.command), ...(entry.args as string[])];
}

/** One argument as a POSIX shell reads it back (for --print). */
export const shellQuote = (arg: string) =>
  /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;

/** Replaces memctx's user-scope entry in Claude Code with `entry`, through `claude`. */
export function addWithClaude(claude: string, entry: Entry): void {
  // A .cmd file (npm's claude on Windows) runs only through cmd.exe, which splits on spaces: each
  // argument goes quoted there.
  const viaShell = claude.toLowerCase().endsWith(".cmd");
  const run = (args: string[]) =>
    spawnSync(
      viaShell ? `"${claude}"` : claude,
      viaShell ? args.map((a) => `"${a.replaceAll('"', '""')}"`) : args,
      {
        encoding: "utf8",
        shell: viaShell,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
  // `add` refuses a name that exists: the previous entry goes first (none there is no error for us).
  run(["mcp", "remove", "--scope", "user", SERVER_NAME]);
  const res = run(claudeAddArgs(entry));
  if (res.error || res.status !== 0) {
    const said = (res.stderr || res.stdout || String(res.error ?? "")).trim().split("\n")[0];
    throw new CliError(
      `${claude} mcp add failed${said ? `: ${said}` : ""}; run the same command with --print to add the entry by hand`,
      1,
    );
  }
}
