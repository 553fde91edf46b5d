import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const NODE = join(ROOT, "node_modules/.bin/node");
const MAIN = join(ROOT, "dist/cli/main.js");
const KEY = "mk_e2e_http_key_0123456789";

describe("memctx mcp --http (a real child process)", () => {
  let dir: string;
  let child: ChildProcess;
  let url: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    if (!existsSync(MAIN))
      throw new Error(`${MAIN} is missing: run npm run build (npm test builds it first)`);
    dir = mkdtempSync(join(tmpdir(), "memctx-http-"));
    child = spawn(NODE, [MAIN, "mcp", "--http", "--port", "0"], {
      env: { PATH: process.env.PATH ?? "", HOME: dir, MEMCTX_DATA_DIR: dir, MEMCTX_API_KEY: KEY },
      stdio: ["ignore", "ignore", "pipe"],
    });
    url = await new Promise<string>((resolveUrl, reject) => {
      let err = "";
      const timer = setTimeout(() => reject(new Error(`no address within 20 s: ${err}`)), 20_000);
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
        const m = /MCP server on (http:\/\/\S+\/mcp)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]!);
        }
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  async function session(namespace: string) {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${KEY}`, "x-memctx-namespace": namespace } },
    });
    const client = new Client({ name: "http-e2e", version: "1" });
    await client.connect(transport);
    clients.push(client);
    return client;
  }
  const call = async (c: Client, name: string, args: Record<string, unknown> = {}) => {
    const r = (await c.callTool({ name, arguments: args })) as CallToolResult;
    if (r.isError) throw new Error(JSON.stringify(r.content));
    return r.structuredContent as Record<string, unknown>;
  };

  it("binds 127.0.0.1 and accepts the MEMCTX_API_KEY given at start", () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it("keeps two sessions bound to two namespaces out of each other's content", async () => {
    const red = await session("red");
    const blue = await session("blue");
    await call(red, "add_memory", { content: "Red team codename is Falcon", wait: true });
    await call(blue, "add_memory", { content: "Blue team codename is Heron", wait: true });
    const redChunks = JSON.stringify((await call(red, "list", { type: "chunks" })).chunks);
    const blueChunks = JSON.stringify((await call(blue, "list", { type: "chunks" })).chunks);
    expect(redChunks).toContain("Falcon");
    expect(redChunks).not.toContain("Heron");
    expect(blueChunks).toContain("Heron");
    expect(blueChunks).not.toContain("Falcon");
  });

  it("refuses a request without the key", async () => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(401);
  });
});
