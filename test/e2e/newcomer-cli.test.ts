import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliError } from "../../src/cli/cli-error.js";
import { commands } from "../../src/cli/commands/index.js";
import { nodeSupported } from "../../src/cli/node-requirement.js";
import { VERSION } from "../../src/version.js";

const ROOT = resolve(import.meta.dirname, "../..");
const NODE = join(ROOT, "node_modules/.bin/node");
const MAIN = join(ROOT, "dist/cli/main.js");

/** A Node older than 22.19 on this machine (the system's), or undefined where there is none. */
function oldNode(): string | undefined {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"]) {
    if (!existsSync(candidate)) continue;
    const v = spawnSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
    if (!nodeSupported(v)) return candidate;
  }
  return undefined;
}

describe("what a newcomer meets on the command line", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "memctx-newcomer-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const env = () => ({ PATH: process.env.PATH ?? "", HOME: dir, MEMCTX_DATA_DIR: join(dir, "data") });
  const memctx = (...args: string[]) => spawnSync(NODE, [MAIN, ...args], { env: env(), encoding: "utf8" });

  const old = oldNode();
  it.skipIf(!old)("on a Node older than 22.19, says in one line which Node it needs, and exits 1", () => {
    for (const args of [["mcp"], [], ["status"], ["serve", "--port", "0"]]) {
      const res = spawnSync(old!, [MAIN, ...args], { env: env(), encoding: "utf8" });
      expect(res.status, args.join(" ")).toBe(1);
      expect(res.stderr.trim().split("\n")).toHaveLength(1);
      expect(res.stderr).toMatch(/needs Node\.js 22\.19 or newer.*nodejs\.org/);
      expect(res.stderr).not.toMatch(/ERR_|at .*\.js:\d+/);
    }
  });

  it.skipIf(!old)("answers --help, help <command> and --version on a Node older than 22.19", () => {
    for (const args of [
      ["--help"],
      ["help", "mcp"],
      ["serve", "--help"],
      ["status", "--help"],
      ["--version"],
    ]) {
      const res = spawnSync(old!, [MAIN, ...args], { env: env(), encoding: "utf8" });
      expect(res.status, `${args.join(" ")}: ${res.stderr}`).toBe(0);
      expect(res.stdout.length, args.join(" ")).toBeGreaterThan(4);
    }
  });

  it("answers memctx help <command> as <command> --help, and refuses an unknown one", () => {
    expect(memctx("help", "serve").stdout).toBe(memctx("serve", "--help").stdout);
    const bad = memctx("help", "frobnicate");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("no command 'frobnicate'");
  });

  it("prints one startup line on stderr naming version, data directory, namespace and models", async () => {
    const transport = new StdioClientTransport({
      command: NODE,
      args: [MAIN, "mcp", "--namespace", "work"],
      env: env(),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const client = new Client({ name: "newcomer", version: "1" });
    await client.connect(transport);
    try {
      await client.callTool({
        name: "add_memory",
        arguments: { content: "Ana likes green tea", wait: true },
      });
      expect(stderr).toContain(
        `memctx ${VERSION}: MCP server over stdio, embedded engine in ${join(dir, "data")} (embedder `,
      );
      expect(stderr).toMatch(/extractor offline\), namespace work\n/);
    } finally {
      await client.close();
    }

    const res = memctx("status");
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain(`memctx ${VERSION}`);
    expect(res.stdout).toMatch(/namespaces:\s+1\n/);
    expect(res.stdout).toMatch(/documents:\s+1\n/);
    expect(res.stdout).toMatch(/memories:\s+[1-9]\d*\n/);
    expect(res.stdout).toMatch(/pending jobs:\s+0/);
    // The data directory's free space against the reserve memctx serve keeps (MEMCTX_DISK_RESERVE).
    expect(res.stdout).toMatch(
      /disk:\s+\S+ [GM]B free of \S+ [GM]B; memctx serve refuses new content \(507\) below \S+ [GM]B \(reserve 5%, --disk-reserve \/ MEMCTX_DISK_RESERVE\)/,
    );
    // One document is "1 document", not "1 documents".
    expect(res.stdout).toMatch(/\n {2}work: 1 document, [1-9]\d* memor(y|ies)\n/);
    const memories = Number(/work: 1 document, (\d+)/.exec(res.stdout)?.[1]);
    expect(res.stdout).toContain(`work: 1 document, ${memories} ${memories === 1 ? "memory" : "memories"}`);
  });

  it("status on a data directory that does not exist says so and creates nothing", () => {
    const res = memctx("status");
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain("nothing stored yet");
    expect(existsSync(join(dir, "data"))).toBe(false);
  });

  it("serve prints its startup line on stderr", async () => {
    const child = spawn(NODE, [MAIN, "serve", "--port", "0"], { env: env() });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let err = "";
        child.stderr.on("data", (d: Buffer) => {
          err += d.toString();
          if (err.includes("\n")) resolve(err);
        });
        child.once("exit", () => reject(new Error(`serve exited: ${err}`)));
      });
      expect(line).toMatch(
        new RegExp(
          `^memctx ${VERSION.replace(/\./g, "\\.")}: v5 API on http://127\\.0\\.0\\.1:\\d+, embedded engine in `,
        ),
      );
    } finally {
      child.kill("SIGTERM");
    }
  });
});

describe("a mistake on the command line", () => {
  const memctx = (...args: string[]) =>
    spawnSync(NODE, [MAIN, ...args], {
      // A data directory that is never made: every mistake is answered before anything is opened.
      env: { PATH: process.env.PATH ?? "", MEMCTX_DATA_DIR: join(tmpdir(), "memctx-never-made") },
      encoding: "utf8",
    });

  /** Exit 2 and one line on stderr, no stack and not the help; the line is returned. */
  const usageMistake = (args: string[]): string => {
    const res = memctx(...args);
    expect(res.status, `${args.join(" ")}: ${res.stderr}`).toBe(2);
    expect(res.stdout, args.join(" ")).toBe("");
    const lines = res.stderr.trimEnd().split("\n");
    expect(lines, args.join(" ")).toHaveLength(1);
    expect(res.stderr).not.toMatch(/\bat .*:\d+:\d+|TypeError|ERR_PARSE_ARGS|Usage:/);
    return lines[0]!;
  };

  /** `--port` -> `--prot`: two different neighbouring letters swapped, the commonest slip. */
  const slip = (flag: string) => {
    let i = Math.min(3, flag.length - 2);
    while (flag[i] === flag[i + 1]) i++;
    return `${flag.slice(0, i)}${flag[i + 1]}${flag[i]}${flag.slice(i + 2)}`;
  };

  it("a mistyped flag, on every command, is named with the nearest valid one", async () => {
    // Every flag of every command, in this process: each command reads its flags before it opens
    // anything, so the mistake is all that happens (the data directory is never made).
    for (const command of commands) {
      for (const name of Object.keys(command.options)) {
        const typed = slip(`--${name}`);
        const refused = await command.run([typed, "x"]).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(refused, `${command.name} ${typed}`).toBeInstanceOf(CliError);
        expect((refused as CliError).message).toBe(
          `${command.name}: unknown option ${typed}; did you mean --${name}? (memctx ${command.name} --help lists every option)`,
        );
        expect((refused as CliError).exitCode).toBe(2);
      }
    }
    expect(existsSync(join(tmpdir(), "memctx-never-made"))).toBe(false);
    // As a process: exit 2, one line on stderr. With no command, the flags are `mcp`'s.
    expect(usageMistake(["--prot", "9000"])).toBe(
      "memctx: mcp: unknown option --prot; did you mean --port? (memctx mcp --help lists every option)",
    );
    expect(usageMistake(["serve", "--port=1", "--prot=9000"])).toContain(
      "unknown option --prot; did you mean --port?",
    );
  });

  it("a flag far from every valid one is named, with where the list is and no guess", () => {
    expect(usageMistake(["serve", "--verbose"])).toBe(
      "memctx: serve: unknown option --verbose (memctx serve --help lists every option)",
    );
  });

  it("a mistyped command or subcommand names the nearest", () => {
    expect(usageMistake(["servee"])).toBe(
      "memctx: unknown command 'servee'; did you mean serve? (memctx --help lists the commands)",
    );
    expect(usageMistake(["sttaus"])).toContain("did you mean status?");
    expect(usageMistake(["help", "imprt"])).toContain("no command 'imprt'; did you mean import?");
    expect(usageMistake(["frobnicate"])).toBe(
      "memctx: unknown command 'frobnicate' (memctx --help lists the commands)",
    );
    expect(usageMistake(["keys", "craete"])).toContain("unknown action 'craete'; did you mean create?");
    expect(usageMistake(["install", "cursr"])).toContain("unknown client 'cursr'; did you mean cursor?");
  });

  it("a flag without its value, a switch with one and a stray argument are one line each", () => {
    expect(usageMistake(["serve", "--port"])).toBe(
      "memctx: serve: --port needs a value (memctx serve --help lists every option)",
    );
    expect(usageMistake(["serve", "--port", "--host", "0.0.0.0"])).toContain(
      "--port needs a value (a value that begins with a dash goes as --port=VALUE)",
    );
    expect(usageMistake(["install", "--print=yes", "cursor"])).toContain(
      "--print is a switch and takes no value",
    );
    expect(usageMistake(["status", "extra"])).toContain("status takes no argument 'extra'");
  });

  it("--help of every command lists every flag it takes", () => {
    for (const command of commands) {
      for (const name of Object.keys(command.options)) {
        // Listed under "Options:", at the start of a line: not only in the usage line.
        expect(command.usage, `${command.name} --${name}`).toMatch(new RegExp(`\\n\\s+--${name}\\b`));
      }
    }
    // What `--help` prints is that text.
    const res = memctx("serve", "--help");
    expect(res.status).toBe(0);
    expect(res.stdout).toBe(`${commands.find((c) => c.name === "serve")!.usage.trim()}\n`);
  });
});
