/**
 * What a newcomer gets from the package itself: the packed tarball installed into an empty
 * directory, its `install --print` entry started from another directory, and the one-line
 * message on a Node that is too old.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeSupported } from "../../src/cli/node-requirement.js";

const ROOT = resolve(import.meta.dirname, "../..");
const NODE = join(ROOT, "node_modules/.bin/node");

/** A Node older than 22.19 on this machine, or undefined. */
function oldNode(): string | undefined {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"]) {
    if (!existsSync(candidate)) continue;
    const v = spawnSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
    if (!nodeSupported(v)) return candidate;
  }
  return undefined;
}

describe("the packed package, installed in an empty directory", () => {
  let work: string;
  let installed: string;
  beforeAll(() => {
    if (!existsSync(join(ROOT, "dist/cli/main.js")))
      throw new Error("run npm run build first (npm test does)");
    work = mkdtempSync(join(tmpdir(), "memctx-packed-"));
    // dist is built already (pretest): pack it as it is, without running prepack again.
    execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", work], { cwd: ROOT });
    const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"))!;
    const project = join(work, "project");
    mkdirSync(project);
    execFileSync(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--silent",
        join(work, tarball),
      ],
      { cwd: project, stdio: ["ignore", "ignore", "pipe"] },
    );
    installed = join(project, "node_modules", "memctx", "dist", "cli", "main.js");
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("prints an entry that runs the installed package and answers initialize and tools/list from elsewhere", async () => {
    const home = join(work, "home");
    mkdirSync(home);
    const res = spawnSync(NODE, [installed, "install", "claude-desktop", "--print"], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "", HOME: home },
      encoding: "utf8",
    });
    expect(res.status, res.stderr).toBe(0);
    const entry = JSON.parse(res.stdout.replace(/^#.*\n/, "")).mcpServers.memctx;
    expect(entry.args).toEqual([installed, "mcp"]);

    const elsewhere = join(work, "elsewhere");
    mkdirSync(elsewhere);
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      cwd: elsewhere,
      env: { HOME: home, MEMCTX_DATA_DIR: join(home, "data") },
      stderr: "pipe",
    });
    const client = new Client({ name: "packed-e2e", version: "1" });
    try {
      await client.connect(transport);
      expect(client.getServerVersion()?.name).toBe("memctx");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        "add_memory",
        "search",
        "get_profile",
        "forget",
        "list",
        "connect_source",
      ]);
    } finally {
      await client.close();
    }
  });

  const old = oldNode();
  it.skipIf(!old)("gives the one-line message on a Node older than 22.19, and help still works there", () => {
    const bad = spawnSync(old!, [installed, "mcp"], { encoding: "utf8", env: { PATH: "/usr/bin:/bin" } });
    expect(bad.status).toBe(1);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toMatch(/needs Node\.js 22\.19 or newer/);
    const help = spawnSync(old!, [installed, "--help"], { encoding: "utf8" });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain("Usage: memctx");
  });
});
