/**
 * Per-turn latency of logging a conversation through add_memory (conversationId + role), at turns
 * 1, 100 and 1,000 of one conversation: the real MCP server and SDK client in process, the
 * embedded engine on a temp SQLite file with its background workers processing as turns arrive.
 * `resend` is the way before append: read the transcript, send all of it back.
 *
 *   npx tsx bench/append.ts [turns=1000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { MemoryClient, NotFoundError } from "../src/client/index.js";
import { openEngine } from "../src/engine/index.js";
import { createMcpServer } from "../src/mcp/server.js";

const TURNS = Number(process.argv[2] ?? 1000);
const KEY = "mk_bench_append_0123456789";
/** Turns around each reported one (its window's median is reported). */
const WINDOW = 5;
const AT = [1, 100, 1000].filter((t) => t <= TURNS);

const sentence = (i: number) =>
  `turn ${i}: we talked about the trip to Lisbon, the budget of ${100 + i} euros and who books the hotel`;

async function run(mode: "append" | "resend") {
  const dir = mkdtempSync(join(tmpdir(), "memctx-append-bench-"));
  const engine = await openEngine({ dataDir: dir, apiKey: KEY, log: () => {} });
  const client = new MemoryClient({ apiKey: KEY, fetch: engine.fetch });
  const server = createMcpServer({ client, namespace: "bench" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const mcp = new Client({ name: "append-bench", version: "1" });
  await Promise.all([server.connect(b), mcp.connect(a)]);
  const ns = client.ns("bench");
  const ms: number[] = [];
  for (let i = 1; i <= TURNS; i++) {
    const role = i % 2 ? "user" : "assistant";
    const t0 = performance.now();
    if (mode === "append") {
      const r = await mcp.callTool({
        name: "add_memory",
        arguments: { content: sentence(i), conversationId: "trip", role },
      });
      if (r.isError) throw new Error(JSON.stringify(r.content));
    } else {
      let transcript = "";
      try {
        transcript = (await ns.documents.get("conv-trip")).content ?? "";
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      const line = `${role}: ${sentence(i)}`;
      await ns.documents.add({ id: "conv-trip", content: transcript ? `${transcript}\n${line}` : line });
    }
    ms.push(performance.now() - t0);
  }
  await mcp.close();
  await client.close();
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
  const at = (t: number) => {
    const w = ms.slice(Math.max(0, t - 1 - WINDOW), Math.min(ms.length, t + WINDOW)).sort((x, y) => x - y);
    return w[Math.floor(w.length / 2)]!;
  };
  return AT.map((t) => `turn ${t}: ${at(t).toFixed(1)} ms`).join(", ");
}

console.log(`node ${process.version}; median of turns t-${WINDOW}..t+${WINDOW}; background workers on`);
for (const mode of ["append", "resend"] as const) console.log(`${mode.padEnd(6)} ${await run(mode)}`);
