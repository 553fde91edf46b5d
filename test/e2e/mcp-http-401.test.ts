/**
 * `memctx mcp --http` as a real child process on its own key file: a remote caller without a
 * valid key learns how to get one, never a path of the server's machine (the audit found the key
 * file's absolute path in the 401); the operator's own startup line still names the file.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpHttpChild, spawnMcpHttp, tempDir } from "../support/harness.js";

const dir = tempDir("memctx-http-401-");
let mcp: McpHttpChild;
let url: string;

beforeAll(async () => {
  // No MEMCTX_API_KEY: the server's own key file is the key, as a fresh install has it.
  mcp = await spawnMcpHttp({ HOME: dir.path }, ["--data-dir", dir.path]);
  url = mcp.url;
});
afterAll(async () => {
  await mcp.stop();
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
    expect(mcp.stderr()).toContain(join(dir.path, "mcp-local.key"));
  });
});
