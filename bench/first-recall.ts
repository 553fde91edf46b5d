/**
 * First recall on small, fresh stores (test/fixtures/first-recall.ts): the share of questions whose
 * answer is in the top 3 hits of a default search (no mode, limit or threshold), on the set the
 * first-recall test asserts and on the fresh set written to check that its rules generalize:
 *   npx tsx bench/first-recall.ts [--show-misses]
 * Through the API and through the MCP search tool (the real SDK client over an in-memory
 * transport), whose default search falls back to the nearest matches when nothing reaches the
 * threshold. Each also counted on memory hits only: a store's chunks are its whole documents, which
 * hold every answer of the store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { MemoryClient } from "../src/client/index.js";
import { openEngine } from "../src/engine/index.js";
import {
  addStores,
  apiSearch,
  FIRST_RECALL_STORES,
  FRESH_STORES,
  mcpSearch,
  recall,
} from "../test/fixtures/first-recall.js";

const { values } = parseArgs({ options: { "show-misses": { type: "boolean", default: false } } });
const apiKey = "mk_first_recall_bench";
const dir = mkdtempSync(join(tmpdir(), "memctx-first-recall-"));
const engine = await openEngine({ dataDir: dir, apiKey, log: () => {} });
const client = new MemoryClient({ apiKey, fetch: (r) => engine.fetch(r), maxRetries: 0 });

try {
  for (const [name, stores] of [
    ["first", FIRST_RECALL_STORES],
    ["fresh", FRESH_STORES],
  ] as const) {
    await addStores(client, name, stores);
    for (const [how, search] of [
      ["API search", apiSearch(client)],
      ["MCP search tool", mcpSearch(client)],
    ] as const) {
      const any = await recall(name, stores, search);
      const memories = await recall(name, stores, search, { memoriesOnly: true });
      const pct = (r: { found: number; asked: number }) => ((100 * r.found) / r.asked).toFixed(1);
      console.log(
        `${name}, ${how}: ${any.found} of ${any.asked} (${pct(any)}%) in the top 3; ` +
          `memories only ${memories.found} (${pct(memories)}%)`,
      );
      if (values["show-misses"]) console.log(memories.missed.map((m) => `  ${m}`).join("\n"));
    }
  }
} finally {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}
