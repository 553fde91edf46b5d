/**
 * First recall on small, fresh stores (test/fixtures/first-recall.ts): the share of questions whose
 * answer is in the top 3 hits of a default search (no mode, limit or threshold), on the set the
 * first-recall test asserts and on the fresh set written to check that its rules generalize:
 *   npx tsx bench/first-recall.ts [--show-misses]
 * Also through the MCP search tool (the real SDK client over an in-memory transport), whose default
 * search falls back to the nearest matches when nothing reaches the threshold: the share whose
 * answer is in its first 3 results.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { MemoryClient } from "../src/client/index.js";
import { openEngine } from "../src/engine/index.js";
import { createMcpServer } from "../src/mcp/server.js";
import { FIRST_RECALL_STORES, FRESH_STORES, type RecallStore } from "../test/fixtures/first-recall.js";

const { values } = parseArgs({ options: { "show-misses": { type: "boolean", default: false } } });
const apiKey = "mk_first_recall_bench";
const dir = mkdtempSync(join(tmpdir(), "memctx-first-recall-"));
const engine = await openEngine({ dataDir: dir, apiKey, log: () => {} });
const client = new MemoryClient({ apiKey, fetch: (r) => engine.fetch(r), maxRetries: 0 });

async function measure(name: string, stores: RecallStore[]) {
  for (const [i, store] of stores.entries()) {
    const ns = client.ns(`${name}-${i}`);
    const ids: string[] = [];
    for (const [j, doc] of store.docs.entries()) {
      const id = `s${i}-d${j}`;
      await ns.documents.add({
        id,
        content: doc.content,
        ...(doc.date ? { date: doc.date } : {}),
        dreaming: "instant",
      });
      ids.push(id);
    }
    for (const id of ids) await ns.documents.waitFor(id, { until: "memories", timeoutMs: 60_000 });
  }
  const api = async (i: number, question: string) =>
    (await client.ns(`${name}-${i}`).search({ query: question })).results.map(
      (h) => h.memory ?? h.chunk ?? "",
    );
  const mcp = async (i: number, question: string) => {
    const server = createMcpServer({ client, namespace: `${name}-${i}` });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const session = new Client({ name: "first-recall-bench", version: "1.0.0" });
    await session.connect(clientSide);
    try {
      const res = (await session.callTool({
        name: "search",
        arguments: { query: question },
      })) as CallToolResult;
      return ((res.structuredContent as { results: { text: string }[] } | undefined)?.results ?? []).map(
        (r) => r.text,
      );
    } finally {
      await session.close();
      await server.close();
    }
  };
  for (const [how, search] of [
    ["API search", api],
    ["MCP search tool", mcp],
  ] as const) {
    let found = 0;
    let asked = 0;
    const misses: string[] = [];
    for (const [i, store] of stores.entries()) {
      for (const [question, answer] of store.asks) {
        const top = (await search(i, question)).slice(0, 3);
        asked++;
        if (top.some((t) => t.toLowerCase().includes(answer.toLowerCase()))) found++;
        else misses.push(`  ${question} -> ${JSON.stringify(top)}`);
      }
    }
    console.log(
      `${name}, ${how}: ${found} of ${asked} (${((100 * found) / asked).toFixed(1)}%) in the top 3`,
    );
    if (values["show-misses"]) console.log(misses.join("\n"));
  }
}

try {
  await measure("first", FIRST_RECALL_STORES);
  await measure("fresh", FRESH_STORES);
} finally {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}
