import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VERSION } from "../../src/version.js";

const ROOT = resolve(import.meta.dirname, "../..");
const NODE = join(ROOT, "node_modules/.bin/node");
const MAIN = join(ROOT, "dist/cli/main.js");

/** A Node older than 22.13 on this machine (the system's), or undefined where there is none. */
function oldNode(): string | undefined {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"]) {
    if (!existsSync(candidate)) continue;
    const v = spawnSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
    const [major = 0, minor = 0] = v.split(".").map(Number);
    if (major < 22 || (major === 22 && minor < 13)) return candidate;
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
  it.skipIf(!old)("on a Node older than 22.13, says in one line which Node it needs, and exits 1", () => {
    for (const args of [["mcp"], [], ["status"], ["serve", "--port", "0"]]) {
      const res = spawnSync(old!, [MAIN, ...args], { env: env(), encoding: "utf8" });
      expect(res.status, args.join(" ")).toBe(1);
      expect(res.stderr.trim().split("\n")).toHaveLength(1);
      expect(res.stderr).toMatch(/needs Node\.js 22\.13 or newer.*nodejs\.org/);
      expect(res.stderr).not.toMatch(/ERR_|at .*\.js:\d+/);
    }
  });

  it.skipIf(!old)("answers --help, help <command> and --version on a Node older than 22.13", () => {
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
    expect(res.stdout).toContain("work: 1 documents");
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
