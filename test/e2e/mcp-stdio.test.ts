import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePdf } from "../engine/ingest/pdf-fixture.js";

const ROOT = resolve(import.meta.dirname, "../..");
const NODE = join(ROOT, "node_modules/.bin/node");
const MAIN = join(ROOT, "dist/cli/main.js");

/** A real `memctx` child process over stdio, on its own data directory. */
async function start(dataDir: string, args: string[]) {
  const transport = new StdioClientTransport({
    command: NODE,
    args: [MAIN, ...args],
    env: { PATH: process.env.PATH ?? "", HOME: dataDir, MEMCTX_DATA_DIR: dataDir },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client({ name: "stdio-e2e", version: "1" });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

const call = async (c: Client, name: string, args: Record<string, unknown> = {}) => {
  const r = (await c.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(JSON.stringify(r.content));
  return r.structuredContent as Record<string, unknown>;
};

describe("memctx over stdio (a real child process)", () => {
  let dir: string;
  beforeAll(() => {
    if (!existsSync(MAIN))
      throw new Error(`${MAIN} is missing: run npm run build (npm test builds it first)`);
    dir = mkdtempSync(join(tmpdir(), "memctx-stdio-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts with no arguments and keeps a conversation in one document across restarts", async () => {
    const first = await start(dir, []);
    try {
      const { tools } = await first.client.listTools();
      expect(tools.map((t) => t.name)).toContain("add_memory");
      await call(first.client, "add_memory", {
        content: "We chose Postgres",
        conversationId: "s1",
        role: "user",
      });
    } finally {
      await first.close();
    }
    const second = await start(dir, ["mcp"]);
    try {
      const res = await call(second.client, "add_memory", {
        content: "Good call",
        conversationId: "s1",
        role: "assistant",
        wait: true,
      });
      expect(res).toMatchObject({ id: expect.stringMatching(/^doc_/), turns: 2, memoriesReady: true });
      const list = await call(second.client, "list", { type: "chunks" });
      expect(JSON.stringify(list.chunks)).toContain("user: We chose Postgres");
      const resources = await second.client.listResources();
      expect(resources.resources.map((r) => r.uri)).toEqual(["memctx://profile/default"]);
    } finally {
      await second.close();
    }
  });

  it("binds --namespace: one namespace's content stays out of another's", async () => {
    const a = await start(dir, ["mcp", "--namespace", "team-a"]);
    try {
      await call(a.client, "add_memory", { content: "Team A's deploy day is Tuesday", wait: true });
      expect((await call(a.client, "list")).documents).toHaveLength(1);
    } finally {
      await a.close();
    }
    const b = await start(dir, ["--namespace", "team-b"]);
    try {
      expect((await call(b.client, "list")).documents).toEqual([]);
    } finally {
      await b.close();
    }
  });

  it("stores a local file named by path (a PDF and a Markdown note), searchable afterwards", async () => {
    const files = mkdtempSync(join(tmpdir(), "memctx-stdio-files-"));
    const c = await start(dir, ["mcp", "--namespace", "files"]);
    try {
      const pdf = join(files, "runbook.pdf");
      writeFileSync(pdf, makePdf([["Rotate the database credentials every ninety days."]], "Runbook"));
      const md = join(files, "notes.md");
      writeFileSync(md, "# Notes\n\nThe staging cluster lives in Frankfurt.\n");
      const a = await call(c.client, "add_memory", { file: pdf, wait: true });
      expect(a).toMatchObject({ status: "done", memoriesReady: true });
      await call(c.client, "add_memory", { file: md, wait: true });
      const docs = (await call(c.client, "list")).documents as { title: string; type: string }[];
      expect(docs.map((d) => [d.title, d.type]).sort()).toEqual([
        ["Notes", "text"],
        // The file's own name, not the PDF's internal Title ("Runbook").
        ["runbook.pdf", "pdf"],
      ]);
      const found = await call(c.client, "search", { query: "database credentials ninety days" });
      expect(JSON.stringify(found)).toContain("Rotate the database credentials");
    } finally {
      await c.close();
      rmSync(files, { recursive: true, force: true });
    }
  });

  it("exits cleanly when its client closes standard input", async () => {
    const child = spawn(NODE, [MAIN, "mcp", "--namespace", "quiet"], {
      env: { PATH: process.env.PATH ?? "", HOME: dir, MEMCTX_DATA_DIR: dir },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    };
    child.stdin.write(`${JSON.stringify(init)}\n`);
    await new Promise<void>((r) => {
      const check = () => (stdout.includes("\n") ? r() : setTimeout(check, 20));
      check();
    });
    child.stdin.end();
    expect(await exited).toBe(0);
    // Only protocol on stdout: every line is a JSON-RPC message.
    for (const line of stdout.trim().split("\n")) expect(JSON.parse(line).jsonrpc).toBe("2.0");
  });
});
