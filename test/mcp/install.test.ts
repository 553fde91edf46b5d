import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configPath, currentLaunch } from "../../src/cli/commands/install.js";

const ROOT = resolve(import.meta.dirname, "../..");
const NODE = join(ROOT, "node_modules/.bin/node");
const MAIN = join(ROOT, "dist/cli/main.js");

describe("memctx install", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "memctx-home-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  /** The real CLI with a temp HOME, so nothing touches the real user's configuration. */
  const memctx = (...args: string[]) =>
    spawnSync(NODE, [MAIN, "install", ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
      encoding: "utf8",
    });
  const json = (file: string) => JSON.parse(readFileSync(file, "utf8"));

  /** The Node the CLI runs on, as the entry names it (the resolved binary, not the .bin link). */
  const nodeBinary = () => spawnSync(NODE, ["-p", "process.execPath"], { encoding: "utf8" }).stdout.trim();

  it("writes a claude-desktop entry that runs this installation with its Node, and the namespace", () => {
    const res = memctx("claude-desktop", "--namespace", "work");
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
    const res = memctx("claude-desktop", "--print");
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
    const res = memctx("cursor");
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

  it("uses VS Code's servers key and Claude Code's user file, both with type stdio", () => {
    expect(memctx("vscode").status).toBe(0);
    expect(json(join(home, ".config", "Code", "User", "mcp.json")).servers.memctx).toMatchObject({
      type: "stdio",
      command: nodeBinary(),
    });
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ numStartups: 3 }));
    expect(memctx("claude-code").status).toBe(0);
    const cc = json(join(home, ".claude.json"));
    expect(cc.numStartups).toBe(3);
    expect(cc.mcpServers.memctx).toMatchObject({ type: "stdio", args: [MAIN, "mcp"] });
  });

  it("prints the entry with --print and changes nothing", () => {
    const res = memctx("cursor", "--print");
    expect(res.status).toBe(0);
    expect(res.stdout).toContain(join(home, ".cursor", "mcp.json"));
    expect(res.stdout).toContain('"memctx"');
    expect(existsSync(join(home, ".cursor"))).toBe(false);
  });

  it("leaves a configuration it cannot parse untouched and says so", () => {
    const file = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, "{ // a comment\n }");
    const res = memctx("cursor");
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/not plain JSON.*--print/s);
    expect(readFileSync(file, "utf8")).toBe("{ // a comment\n }");
  });

  it("refuses an unknown client or a bad namespace", () => {
    expect(memctx("emacs").status).toBe(2);
    expect(memctx("cursor", "--namespace", "bad name").stderr).toMatch(/must match/);
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
