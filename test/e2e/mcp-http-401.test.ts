/**
 * `memctx mcp --http` as a real child process on its own key file: a remote caller without a
 * valid key learns how to get one, never a path of the server's machine (the audit found the key
 * file's absolute path in the 401); the operator's own startup line still names the file.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../engine/harness.js";

const dir = tempDir("memctx-http-401-");
let child: ChildProcess;
let url: string;
let stderr = "";

beforeAll(async () => {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: dir.path };
  child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "src/cli/main.ts"),
      "mcp",
      "--http",
      "--port",
      "0",
      "--data-dir",
      dir.path,
    ],
    { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] },
  );
  url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address within 20 s: ${stderr}`)), 20_000);
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = /MCP server on (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
});
afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  dir.remove();
});

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

/** Anything that reads as a path: the data directory, or a run of two /-separated names. */
function expectNoPath(text: string) {
  expect(text).not.toContain(dir.path);
  expect(text).not.toMatch(/(^|[\s("'`])\/[\w.-]+\/[\w.-]+/);
}

describe("memctx mcp --http's 401 names no path of the server's machine", () => {
  it("without a key, with an unknown key, and in the OAuth resource metadata", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const none = await fetch(url, { method: "POST", headers, body: initialize });
    expect(none.status).toBe(401);
    const noneText = await none.text();
    expect(noneText).toContain("memctx keys create");
    expectNoPath(noneText);

    const wrong = await fetch(url, {
      method: "POST",
      headers: { ...headers, authorization: "Bearer mk_not_a_key_of_this_server" },
      body: initialize,
    });
    expect(wrong.status).toBe(401);
    const wrongText = await wrong.text();
    expect(wrongText).toContain("Invalid API key");
    expectNoPath(wrongText);

    const meta = await fetch(new URL("/.well-known/oauth-protected-resource", url));
    expect(meta.status).toBe(200);
    expectNoPath(await meta.text());
  });

  it("the operator's startup line on stderr still says where the key file is", () => {
    expect(stderr).toContain(join(dir.path, "mcp-local.key"));
  });
});
