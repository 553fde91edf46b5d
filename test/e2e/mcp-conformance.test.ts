/**
 * The official MCP conformance runner against `memctx mcp --http`, and the official Inspector CLI
 * against `memctx mcp` over stdio and over streamable HTTP: real child processes, the scenarios that apply to a server
 * that is not the SDK's test fixture (the others call tools and resources only that fixture has).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const NODE = join(ROOT, "node_modules/.bin/node");
const MAIN = join(ROOT, "dist/cli/main.js");
const CONFORMANCE = join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const INSPECTOR_DIR = join(ROOT, "node_modules/@modelcontextprotocol/inspector-cli/build");
const INSPECTOR = join(INSPECTOR_DIR, "index.js");
const KEY = "mk_e2e_conformance_key_0123456789";

/** Scenarios of `conformance list --server` that a memory server can answer. */
const HTTP_SCENARIOS = [
  "server-initialize",
  "ping",
  "tools-list",
  "resources-list",
  "logging-set-level",
  "dns-rebinding-protection",
];

/**
 * The runner sends no Authorization header, and memctx requires a key: a reverse proxy in front
 * adds it, as a deployment would. Host and Origin pass through unchanged, so memctx is started
 * with the proxy's address as an allowed host (--allowed-host), exactly as behind a real proxy.
 */
function startKeyProxy(target: () => string): Promise<Server> {
  const proxy = createServer((req, res) => {
    const upstream = request(
      new URL(req.url ?? "/", target()),
      { method: req.method, headers: { ...req.headers, authorization: `Bearer ${KEY}` } },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    upstream.on("error", (e) => res.writeHead(502).end(String(e)));
    req.pipe(upstream);
  });
  return new Promise((r) => proxy.listen(0, "127.0.0.1", () => r(proxy)));
}

describe("the official MCP conformance runner and Inspector CLI", () => {
  let dir: string;
  let child: ChildProcess;
  let proxy: Server;
  let upstream = "";
  let proxyUrl = "";

  beforeAll(async () => {
    if (!existsSync(MAIN))
      throw new Error(`${MAIN} is missing: run npm run build (npm test builds it first)`);
    dir = mkdtempSync(join(tmpdir(), "memctx-conformance-"));
    proxy = await startKeyProxy(() => upstream);
    const port = (proxy.address() as AddressInfo).port;
    proxyUrl = `http://127.0.0.1:${port}/mcp`;
    child = spawn(
      NODE,
      [
        MAIN,
        "mcp",
        "--http",
        "--port",
        "0",
        "--allowed-host",
        `127.0.0.1:${port}`,
        "--allowed-host",
        `localhost:${port}`,
      ],
      {
        env: { PATH: process.env.PATH ?? "", HOME: dir, MEMCTX_DATA_DIR: dir, MEMCTX_API_KEY: KEY },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    upstream = await new Promise<string>((resolveUrl, reject) => {
      let err = "";
      const timer = setTimeout(() => reject(new Error(`no address within 20 s: ${err}`)), 20_000);
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
        const m = /MCP server on (http:\/\/\S+)\/mcp/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]!);
        }
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
  });

  afterAll(async () => {
    if (child?.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    await new Promise((r) => proxy?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(HTTP_SCENARIOS)("passes the conformance scenario %s over streamable HTTP", async (scenario) => {
    const { stdout } = await run(NODE, [CONFORMANCE, "server", "--url", proxyUrl, "--scenario", scenario], {
      timeout: 60_000,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    }).catch((e: { stdout?: string; stderr?: string }) => {
      throw new Error(`conformance ${scenario} failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
    });
    expect(stdout).toMatch(/Passed: (\d+)\/\1, 0 failed/);
  });

  const inspector = async (...args: string[]) => {
    const { stdout } = await run(NODE, [INSPECTOR, NODE, MAIN, "mcp", "--namespace", "inspector", ...args], {
      // The Inspector CLI looks for its own package.json relative to the working directory.
      cwd: INSPECTOR_DIR,
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? "", HOME: dir, MEMCTX_DATA_DIR: dir },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  };

  it("lists the six tools to the Inspector CLI over stdio", async () => {
    const out = (await inspector("--method", "tools/list")) as { tools: { name: string }[] };
    expect(out.tools.map((t) => t.name).sort()).toEqual(
      ["add_memory", "connect_source", "forget", "get_profile", "list", "search"].sort(),
    );
  });

  it("adds and then finds a memory through the Inspector CLI over stdio", async () => {
    const added = (await inspector(
      "--method",
      "tools/call",
      "--tool-name",
      "add_memory",
      "--tool-arg",
      "content=The inspector keeps its notes in a blue notebook",
      "wait=true",
    )) as { isError?: boolean };
    expect(added.isError ?? false).toBe(false);
    const found = (await inspector(
      "--method",
      "tools/call",
      "--tool-name",
      "search",
      "--tool-arg",
      "query=blue notebook",
    )) as { structuredContent: { results: { text?: string; memory?: string; chunk?: string }[] } };
    expect(JSON.stringify(found.structuredContent.results)).toContain("blue notebook");
  });

  it("lists the session's profile resource to the Inspector CLI over stdio", async () => {
    const out = (await inspector("--method", "resources/list")) as { resources: { uri: string }[] };
    expect(out.resources.map((r) => r.uri)).toEqual(["memctx://profile/inspector"]);
  });

  /** The Inspector CLI straight at `memctx mcp --http` (no proxy): the key is the caller's to send. */
  const inspectHttp = (...args: string[]) =>
    run(NODE, [INSPECTOR, `${upstream}/mcp`, "--transport", "http", ...args], {
      cwd: INSPECTOR_DIR,
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? "", HOME: dir },
    });

  it("lists the six tools and searches through the Inspector CLI over streamable HTTP with the bearer key", async () => {
    const auth = ["--header", `Authorization: Bearer ${KEY}`];
    const listed = JSON.parse((await inspectHttp("--method", "tools/list", ...auth)).stdout) as {
      tools: { name: string }[];
    };
    expect(listed.tools).toHaveLength(6);
    const found = JSON.parse(
      (
        await inspectHttp(
          "--method",
          "tools/call",
          "--tool-name",
          "search",
          "--tool-arg",
          "query=notebook",
          ...auth,
        )
      ).stdout,
    ) as { isError?: boolean; structuredContent?: unknown };
    expect(found.isError ?? false).toBe(false);
    expect(found.structuredContent).toBeDefined();
  });

  it("tells the Inspector CLI without a key how to send one, and starts no OAuth sign-in", async () => {
    const failed = await inspectHttp("--method", "tools/list").then(
      () => undefined,
      (e: { code?: number; stdout?: string; stderr?: string }) => e,
    );
    expect(failed?.code).toBe(1);
    const said = `${failed?.stdout ?? ""}${failed?.stderr ?? ""}`;
    expect(said).toContain("Authorization: Bearer <key>");
    expect(said).toContain("not OAuth sign-in");
    expect(said).not.toMatch(/OAuth requires a TTY/i);
  });
});
