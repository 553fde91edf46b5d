import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { MemoryClient } from "../../src/client/index.js";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { installDreaming } from "../../src/engine/memory/dreamer.js";
import { type CreateMcpServerOptions, createMcpServer } from "../../src/mcp/server.js";

export const API_KEY = "mk_test_mcp_0123456789abcdef";

export interface TestEngine {
  engine: Engine;
  client: MemoryClient;
  dir: string;
  close(): Promise<void>;
}

/**
 * A real engine on a SQLite file in a temp dir, reached in-process through a real MemoryClient.
 * `workers: 0` processes nothing: what is added stays queued (the state right after an add).
 */
export async function startEngine(
  opts: { allowPrivateNetwork?: boolean; workers?: number; secretScreening?: boolean } = {},
): Promise<TestEngine> {
  const dir = mkdtempSync(join(tmpdir(), "memctx-mcp-"));
  const engine = await openEngine({
    dataDir: dir,
    apiKey: API_KEY,
    workers: 1,
    log: () => {},
    // Memory extraction with the offline extractor; short batching so dynamic dreaming ends fast.
    dreamer: (ctx) => installDreaming(ctx, { debounceMs: 50, maxWaitMs: 200 }),
    ...opts,
  });
  const client = new MemoryClient({ apiKey: API_KEY, fetch: engine.fetch, retryBaseMs: 10 });
  return {
    engine,
    client,
    dir,
    async close() {
      await client.close();
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Session {
  mcp: Client;
  server: McpServer;
  close(): Promise<void>;
}

/** The real SDK client talking to createMcpServer over an in-memory pair. */
export async function connect(
  opts: Omit<CreateMcpServerOptions, "namespace"> & { namespace?: CreateMcpServerOptions["namespace"] },
  capabilities: ClientCapabilities = {},
  setup?: (client: Client) => void,
): Promise<Session> {
  const server = createMcpServer({ namespace: "test", ...opts });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const mcp = new Client({ name: "memctx-test", version: "1.0.0" }, { capabilities });
  setup?.(mcp);
  await mcp.connect(clientSide);
  return {
    mcp,
    server,
    async close() {
      await mcp.close();
      await server.close();
    },
  };
}

export async function call(mcp: Client, name: string, args: Record<string, unknown> = {}) {
  return (await mcp.callTool({ name, arguments: args })) as CallToolResult;
}

export const text = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** Structured content of a successful call; fails the test with the text of an error result. */
export function structured<T = Record<string, unknown>>(r: CallToolResult): T {
  if (r.isError) throw new Error(`tool error: ${text(r)}`);
  return r.structuredContent as T;
}
