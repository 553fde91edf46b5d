import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse as parseJsonc } from "jsonc-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configPath, currentLaunch } from "../../src/cli/install/clients.js";

const ROOT = resolve(import.meta.dirname, "../..");
const NODE = join(ROOT, "node_modules/.bin/node");
const MAIN = join(ROOT, "dist/cli/main.js");

describe("memctx install", () => {
  let home: string;
  /** PATH of the child: a folder of its own, where a test may put a `claude`. */
  let bin: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "memctx-home-"));
    bin = join(home, "bin");
    mkdirSync(bin);
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  /** The real CLI with a temp HOME, so nothing touches the real user's configuration. */
  const memctx = (args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) =>
    spawnSync(NODE, [MAIN, ...args], {
      env: { PATH: bin, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), ...opts.env },
      cwd: opts.cwd ?? home,
      encoding: "utf8",
    });
  const install = (...args: string[]) => memctx(["install", ...args]);
  const json = (file: string) => JSON.parse(readFileSync(file, "utf8"));
  const jsonc = (file: string) => parseJsonc(readFileSync(file, "utf8"), [], { allowTrailingComma: true });
  const backupsOf = (file: string) =>
    readdirSync(dirname(file)).filter((f) => f.startsWith(`${file.split("/").at(-1)}.memctx-backup-`));

  /** The Node the CLI runs on, as the entry names it (the resolved binary, not the .bin link). */
  const nodeBinary = () => spawnSync(NODE, ["-p", "process.execPath"], { encoding: "utf8" }).stdout.trim();

  /**
   * A stand-in `claude` on PATH that records each call's arguments, one JSON line each; `remove`
   * answers as Claude Code does when there is nothing to remove, and `add` fails when told to.
   */
  function fakeClaude(): { log: string; calls: () => string[][] } {
    const log = join(home, "claude-calls.jsonl");
    const script = join(bin, "claude");
    writeFileSync(
      script,
      `#!${nodeBinary()}
const fs = require("node:fs");
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + "\\n");
if (process.argv[3] === "remove") { process.stderr.write("No MCP server found with name: memctx\\n"); process.exit(1); }
if (process.env.FAKE_CLAUDE_FAIL) { process.stderr.write("MCP server memctx already exists in user config\\n"); process.exit(1); }
process.stdout.write("Added stdio MCP server memctx to user config\\n");
`,
    );
    chmodSync(script, 0o755);
    return {
      log,
      calls: () =>
        existsSync(log)
          ? readFileSync(log, "utf8")
              .trim()
              .split("\n")
              .map((l) => JSON.parse(l) as string[])
          : [],
    };
  }

  it("writes a claude-desktop entry that runs this installation with its Node, and the namespace", () => {
    const res = install("claude-desktop", "--namespace", "work");
    expect(res.status, res.stderr).toBe(0);
    const file = join(home, ".config", "Claude", "claude_desktop_config.json");
    expect(json(file)).toEqual({
      mcpServers: { memctx: { command: nodeBinary(), args: [MAIN, "mcp", "--namespace", "work"] } },
    });
  });

  it("writes a pinned npx entry when run from npm's package cache", () => {
    const launch = { execPath: "/usr/bin/node", version: "1.2.3" };
    expect(
      currentLaunch({ ...launch, entry: "/home/a/.npm/_npx/1f2e/node_modules/memctx/dist/cli/main.js" }),
    ).toEqual({
      command: "npx",
      args: ["-y", "memctx@1.2.3"],
    });
    expect(
      currentLaunch({
        ...launch,
        entry: "C:\\Users\\a\\AppData\\Local\\npm-cache\\_npx\\9\\node_modules\\memctx\\dist\\cli\\main.js",
      }).command,
    ).toBe("npx");
    expect(currentLaunch({ ...launch, entry: "/opt/memctx/dist/cli/main.js" })).toEqual({
      command: "/usr/bin/node",
      args: ["/opt/memctx/dist/cli/main.js"],
    });
  });

  it("prints an entry that, started from another directory, answers initialize and tools/list", async () => {
    const res = install("claude-desktop", "--print");
    expect(res.status, res.stderr).toBe(0);
    const entry = JSON.parse(res.stdout.replace(/^#.*\n/, "")).mcpServers.memctx;
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      cwd: home,
      env: { HOME: home, MEMCTX_DATA_DIR: join(home, "data") },
      stderr: "pipe",
    });
    const client = new Client({ name: "install-test", version: "1" });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("search");
    } finally {
      await client.close();
    }
  });

  it("treats an empty XDG_CONFIG_HOME as unset", () => {
    expect(configPath("vscode", { platform: "linux", home: "/home/ana", env: { XDG_CONFIG_HOME: "" } })).toBe(
      "/home/ana/.config/Code/User/mcp.json",
    );
  });

  it("keeps every other entry and a backup of the previous file", () => {
    const file = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    const before = { mcpServers: { other: { command: "other-server" } }, theme: "dark" };
    writeFileSync(file, JSON.stringify(before));
    const res = install("cursor");
    expect(res.status, res.stderr).toBe(0);
    expect(json(file)).toEqual({
      mcpServers: {
        other: { command: "other-server" },
        memctx: { command: nodeBinary(), args: [MAIN, "mcp"] },
      },
      theme: "dark",
    });
    const backups = readdirSync(dirname(file)).filter((f) => f.startsWith("mcp.json.memctx-backup-"));
    expect(backups).toHaveLength(1);
    expect(json(join(dirname(file), backups[0]!))).toEqual(before);
  });

  it("uses VS Code's servers key, and Claude Code's user file when claude is not on PATH, both with type stdio", () => {
    expect(install("vscode").status).toBe(0);
    expect(json(join(home, ".config", "Code", "User", "mcp.json")).servers.memctx).toMatchObject({
      type: "stdio",
      command: nodeBinary(),
    });
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ numStartups: 3 }));
    expect(install("claude-code").status).toBe(0);
    const cc = json(join(home, ".claude.json"));
    expect(cc.numStartups).toBe(3);
    expect(cc.mcpServers.memctx).toMatchObject({ type: "stdio", args: [MAIN, "mcp"] });
  });

  it("prints the entry with --print and changes nothing", () => {
    const res = install("cursor", "--print");
    expect(res.status).toBe(0);
    expect(res.stdout).toContain(join(home, ".cursor", "mcp.json"));
    expect(res.stdout).toContain('"memctx"');
    expect(existsSync(join(home, ".cursor"))).toBe(false);
  });

  it("leaves a configuration it cannot parse untouched and says where it breaks", () => {
    const file = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    const broken = '{\n  // mine\n  "mcpServers": {\n    "other": { "command": "x" \n}\n';
    writeFileSync(file, broken);
    const res = install("cursor");
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/not valid JSON \(\w+ at line \d+, column \d+\).*--print/s);
    expect(readFileSync(file, "utf8")).toBe(broken);
    expect(backupsOf(file)).toEqual([]);
  });

  it("`memctx install vscode` merges into an mcp.json with comments and keeps them", () => {
    const file = join(home, ".config", "Code", "User", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    // As VS Code writes and people edit it: comments of both kinds, trailing commas, one-line entries.
    const before = `{
  // Servers for every workspace.
  "servers": {
    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" }, // work account
    /* local tools */
    "fetch": {
      "type": "stdio",
      "command": "uvx",
      "args": ["mcp-server-fetch"],
    },
  },
  "inputs": [
    { "type": "promptString", "id": "gh-token", "password": true }, // asked once
  ],
}
`;
    writeFileSync(file, before);
    const res = install("vscode");
    expect(res.status, res.stderr).toBe(0);
    const after = readFileSync(file, "utf8");
    // Every line of the file is still there, in order: only memctx's lines were added.
    const lines = after.split("\n");
    let at = 0;
    for (const line of before.split("\n")) {
      const found = lines.indexOf(line, at);
      expect(found, `kept: ${line}`).toBeGreaterThanOrEqual(at);
      at = found + 1;
    }
    expect(jsonc(file)).toEqual({
      servers: {
        memctx: { type: "stdio", command: nodeBinary(), args: [MAIN, "mcp"] },
        github: { type: "http", url: "https://api.githubcopilot.com/mcp/" },
        fetch: { type: "stdio", command: "uvx", args: ["mcp-server-fetch"] },
      },
      inputs: [{ type: "promptString", id: "gh-token", password: true }],
    });
    const [backup] = backupsOf(file);
    expect(readFileSync(join(dirname(file), backup!), "utf8")).toBe(before);

    // Again: the entry is replaced in place, not added twice, and the comments still stay.
    expect(install("vscode", "--namespace", "work").status).toBe(0);
    const again = readFileSync(file, "utf8");
    expect(again.match(/"memctx"/g)).toHaveLength(1);
    for (const comment of [
      "// Servers for every workspace.",
      "// work account",
      "/* local tools */",
      "// asked once",
    ]) {
      expect(again).toContain(comment);
    }
    expect(jsonc(file).servers.memctx.args).toEqual([MAIN, "mcp", "--namespace", "work"]);
  });

  it("writes a project's file with --project: .vscode/mcp.json, .cursor/mcp.json, .mcp.json", () => {
    const project = join(home, "app");
    mkdirSync(project);
    // A claude on PATH is not used for a project: .mcp.json is the project's own file.
    const claude = fakeClaude();
    expect(install("vscode", "--project", project).status).toBe(0);
    expect(json(join(project, ".vscode", "mcp.json"))).toEqual({
      servers: { memctx: { type: "stdio", command: nodeBinary(), args: [MAIN, "mcp"] } },
    });
    expect(install("cursor", `--project=${project}`, "--namespace", "app").status).toBe(0);
    expect(json(join(project, ".cursor", "mcp.json"))).toEqual({
      mcpServers: { memctx: { command: nodeBinary(), args: [MAIN, "mcp", "--namespace", "app"] } },
    });
    // Without a folder: the current directory.
    const res = memctx(["install", "claude-code", "--project"], { cwd: project });
    expect(res.status, res.stderr).toBe(0);
    expect(json(join(project, ".mcp.json")).mcpServers.memctx).toMatchObject({ type: "stdio" });
    expect(res.stdout).toContain("note: the entry names this machine's Node and memctx");
    expect(claude.calls()).toEqual([]);
    // Nothing of the user's was written.
    expect(existsSync(join(home, ".claude.json"))).toBe(false);
    expect(existsSync(join(home, ".config", "Code"))).toBe(false);
  });

  it("refuses --project for Claude Desktop and a folder that is not there", () => {
    const desktop = install("claude-desktop", "--project", home);
    expect(desktop.status).toBe(2);
    expect(desktop.stderr).toContain("claude-desktop has no project configuration");
    const missing = install("cursor", "--project", join(home, "nowhere"));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--project: .*nowhere is not a folder/);
    expect(install("cursor", join(home, "nowhere")).stderr).toContain("a folder only after --project");
  });

  it("adds Claude Code's entry through `claude mcp add --scope user` when claude is on PATH", () => {
    const claude = fakeClaude();
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ numStartups: 3 }));
    const res = memctx(["install", "claude-code", "--namespace", "work"], {
      env: { MEMCTX_DATA_DIR: join(home, "data") },
    });
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain(
      `memctx added to claude-code with \`${join(bin, "claude")} mcp add --scope user\``,
    );
    expect(claude.calls()).toEqual([
      ["mcp", "remove", "--scope", "user", "memctx"],
      [
        "mcp",
        "add",
        "--scope",
        "user",
        "--transport",
        "stdio",
        "--env",
        `MEMCTX_DATA_DIR=${join(home, "data")}`,
        "--",
        "memctx",
        nodeBinary(),
        MAIN,
        "mcp",
        "--namespace",
        "work",
      ],
    ]);
    // The file is Claude Code's to write; memctx kept a copy of it beforehand.
    expect(json(join(home, ".claude.json"))).toEqual({ numStartups: 3 });
    expect(backupsOf(join(home, ".claude.json"))).toHaveLength(1);
  });

  it("says so when `claude mcp add` fails, and writes nothing itself", () => {
    fakeClaude();
    const res = memctx(["install", "claude-code"], { env: { FAKE_CLAUDE_FAIL: "1" } });
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(/claude mcp add failed: MCP server memctx already exists.*--print/);
    expect(existsSync(join(home, ".claude.json"))).toBe(false);
  });

  it("writes a streamable HTTP entry in each client's format, naming the key instead of holding it", () => {
    const url = "http://127.0.0.1:3333/mcp";
    const key = "mk_secret_never_in_a_file";
    const withKey = { env: { MEMCTX_API_KEY: key } };
    // VS Code: a password input, which it asks for once; the inputs already there stay.
    const vscodeFile = join(home, ".config", "Code", "User", "mcp.json");
    mkdirSync(dirname(vscodeFile), { recursive: true });
    writeFileSync(
      vscodeFile,
      '{\n  "inputs": [{ "type": "promptString", "id": "gh-token", "password": true }]\n}\n',
    );
    const vscode = memctx(["install", "vscode", "--http", url, "--namespace", "work"], withKey);
    expect(vscode.status, vscode.stderr).toBe(0);
    expect(vscode.stdout).toContain("VS Code asks for the key");
    expect(json(vscodeFile)).toEqual({
      servers: {
        memctx: {
          type: "http",
          url,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the client's own variable syntax, written as is.
          headers: { Authorization: "Bearer ${input:memctx-api-key}", "X-Memctx-Namespace": "work" },
        },
      },
      inputs: [
        {
          type: "promptString",
          id: "memctx-api-key",
          description: "memctx API key (sent as Authorization: Bearer)",
          password: true,
        },
        { type: "promptString", id: "gh-token", password: true },
      ],
    });
    // Installed again, the input is not listed twice.
    expect(memctx(["install", "vscode", "--http", url], withKey).status).toBe(0);
    expect(json(vscodeFile).inputs.map((i: { id: string }) => i.id)).toEqual(["memctx-api-key", "gh-token"]);

    // Cursor: its ${env:NAME}; Claude Code's project file: ${NAME}.
    const cursor = memctx(["install", "cursor", "--http", url], withKey);
    expect(cursor.status, cursor.stderr).toBe(0);
    expect(json(join(home, ".cursor", "mcp.json")).mcpServers.memctx).toEqual({
      url,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the client's own variable syntax, written as is.
      headers: { Authorization: "Bearer ${env:MEMCTX_API_KEY}" },
    });
    expect(cursor.stdout).toContain(
      "the entry reads the key from MEMCTX_API_KEY: set it where cursor starts",
    );
    expect(memctx(["install", "claude-code", "--project", home, "--http", url], withKey).status).toBe(0);
    expect(json(join(home, ".mcp.json")).mcpServers.memctx).toEqual({
      type: "http",
      url,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the client's own variable syntax, written as is.
      headers: { Authorization: "Bearer ${MEMCTX_API_KEY}" },
    });
    for (const file of [vscodeFile, join(home, ".cursor", "mcp.json"), join(home, ".mcp.json")]) {
      expect(readFileSync(file, "utf8")).not.toContain(key);
    }
  });

  it("passes Claude Code the HTTP entry with its header, and writes the key itself only with --write-key", () => {
    const url = "https://memory.example.com/mcp";
    const claude = fakeClaude();
    expect(install("claude-code", "--http", url).status).toBe(0);
    expect(claude.calls().at(-1)).toEqual([
      "mcp",
      "add",
      "--scope",
      "user",
      "--transport",
      "http",
      "--header",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the client's own variable syntax, written as is.
      "Authorization: Bearer ${MEMCTX_API_KEY}",
      "--",
      "memctx",
      url,
    ]);
    const res = install("cursor", "--http", url, "--write-key", "--key", "mk_given");
    expect(res.status, res.stderr).toBe(0);
    const file = join(home, ".cursor", "mcp.json");
    expect(json(file).mcpServers.memctx.headers).toEqual({ Authorization: "Bearer mk_given" });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(res.stdout).toContain("holds the key in plain text");
  });

  it("refuses an HTTP entry it cannot write, and says what to do instead", () => {
    const desktop = install("claude-desktop", "--http", "http://127.0.0.1:3333/mcp");
    expect(desktop.status).toBe(2);
    expect(desktop.stderr).toContain("Settings > Connectors");
    expect(install("cursor", "--http", "ftp://127.0.0.1/mcp").stderr).toContain(
      "must start with http:// or https://",
    );
    expect(install("cursor", "--http", "127.0.0.1:3333").stderr).toContain("is not a URL");
    expect(install("cursor", "--http", "http://h/mcp", "--key", "k").stderr).toContain("add --write-key");
    expect(install("cursor", "--http", "http://h/mcp", "--write-key").stderr).toContain(
      "--write-key needs the key: --key KEY or MEMCTX_API_KEY",
    );
    expect(install("cursor", "--write-key").stderr).toContain("go with --http");
    expect(existsSync(join(home, ".cursor"))).toBe(false);
  });

  it("`memctx help install` lists every option", () => {
    const res = memctx(["help", "install"]);
    expect(res.status).toBe(0);
    for (const flag of [
      "--project",
      "--http",
      "--write-key",
      "--key",
      "--namespace",
      "--print",
      "-h, --help",
    ]) {
      expect(res.stdout, flag).toMatch(new RegExp(`\\n\\s+${flag}\\b`));
    }
  });

  it("refuses an unknown client or a bad namespace", () => {
    expect(install("emacs").status).toBe(2);
    expect(install("cursor", "--namespace", "bad name").stderr).toMatch(/must match/);
  });

  it("knows each client's file on macOS and Windows", () => {
    const mac = { platform: "darwin" as const, home: "/Users/ana", env: {} };
    const win = {
      platform: "win32" as const,
      home: "C:\\Users\\ana",
      env: { APPDATA: "C:\\Users\\ana\\AppData\\Roaming" },
    };
    expect(configPath("claude-desktop", mac)).toBe(
      "/Users/ana/Library/Application Support/Claude/claude_desktop_config.json",
    );
    expect(configPath("vscode", mac)).toBe("/Users/ana/Library/Application Support/Code/User/mcp.json");
    expect(configPath("claude-desktop", win)).toMatch(/AppData.Roaming.Claude.claude_desktop_config\.json$/);
  });
});
