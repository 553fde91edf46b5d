/**
 * The largest filter over the widest metadata, on PostgreSQL (run it against a cluster of its
 * own, started under an address-space limit: a runaway statement must not reach a shared server):
 *   npx tsx bench/guard/filter.ts --database-url postgres://… [--keys 1000] [--stored-keys 0] [--groups 60] [--leaves 200]
 * Stores a document whose metadata holds `--keys` keys (`--stored-keys`: written into its rows
 * directly afterwards, as metadata stored before the API's limits), then sends a search and a document list
 * whose filter is an OR of `--groups` AND groups of `--leaves` equality leaves, while /health is
 * polled and the memory of memctx's PostgreSQL backends sampled. Prints each request's status and
 * time, /health's longest answer, the backends' largest RSS, and whether both processes live.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { log, pgAlive, pollHealthApart, startServe, timed, waitProcessed, watchBackends } from "./serve.js";

const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    keys: { type: "string", default: "1000" },
    "stored-keys": { type: "string", default: "0" },
    groups: { type: "string", default: "60" },
    leaves: { type: "string", default: "200" },
  },
});
const databaseUrl = values["database-url"];
if (!databaseUrl) throw new Error("--database-url is required");
const schema = `guard_filter_${process.pid}`;
const url = `${databaseUrl}${databaseUrl.includes("?") ? "&" : "?"}schema=${schema}`;
const storedKeys = Number(values["stored-keys"]);
const keys = Math.max(Number(values.keys), storedKeys);
const groups = Number(values.groups);
const leaves = Number(values.leaves);

const dir = mkdtempSync(join(tmpdir(), "guard-filter-"));
const serve = await startServe(dir, { MEMCTX_DATABASE_URL: url });
try {
  const metadata = (n: number) => {
    const m: Record<string, string> = {};
    for (let i = 0; i < n; i++) m[`key${i}`] = `value ${i}`;
    return m;
  };
  const sent = storedKeys > 0 ? 1 : keys;
  const added = await timed(serve.url, "POST", "/ns/wide/document", {
    content: "The kiln reached 1200 degrees on Tuesday.",
    id: "wide",
    metadata: metadata(sent),
  });
  log(`add with ${sent} metadata keys: ${added.status} ${added.text.slice(0, 200)}`);
  await timed(serve.url, "POST", "/ns/wide/document", {
    content: "The glaze cracked in the kiln.",
    id: "plain",
  });
  log(`processed: ${await waitProcessed(serve.url, "wide")}`);
  if (storedKeys > 0) {
    const wide = JSON.stringify(metadata(storedKeys)).replaceAll("'", "''");
    const u = new URL(databaseUrl);
    u.search = "";
    // On standard input: 10,000 keys are more than one argument may hold.
    execFileSync("psql", [u.toString(), "-q"], {
      // The schema's triggers read its tables by the session's search_path, as memctx's sessions set it.
      input: `SET search_path TO "${schema}";
       UPDATE "${schema}".documents SET metadata = '${wide}' WHERE custom_id = 'wide';
       UPDATE "${schema}".memories SET metadata = '${wide}'
        WHERE document_id = (SELECT id FROM "${schema}".documents WHERE custom_id = 'wide');`,
    });
    log(`stored ${storedKeys} metadata keys (${wide.length} bytes) into the document's rows directly`);
  }

  const filter = {
    operator: "or",
    operands: Array.from({ length: groups }, (_, g) => ({
      operator: "and",
      operands: Array.from({ length: leaves }, (_, i) => ({
        field: `key${(g * leaves + i) % Math.max(keys, 1)}`,
        operator: "eq",
        // Every leaf holds but each group's last: no group short-circuits the OR early.
        value: i === leaves - 1 ? "no such value" : `value ${(g * leaves + i) % Math.max(keys, 1)}`,
      })),
    })),
  };
  log(
    `filter: ${groups} groups of ${leaves} leaves (${groups * leaves}), ${JSON.stringify(filter).length} bytes`,
  );
  for (const [what, path, body] of [
    ["search", "/ns/wide/search", { query: "kiln", filter }],
    ["list documents", "/ns/wide/list/documents", { filter }],
    ["list memories", "/ns/wide/list/memories", { filter }],
    ["profile", "/ns/wide/profile", { filter }],
  ] as const) {
    const health = pollHealthApart(serve.url, 100, 1000);
    const backends = watchBackends(url);
    const r = await timed(serve.url, "POST", path, body, 120_000);
    const h = await health.stop();
    const rss = await backends.stop();
    log(
      `${what}: ${r.status} in ${r.ms} ms (${r.text.slice(0, 160).replace(/\s+/g, " ")}); /health max ${h.maxMs} ms, ${h.failed}/${h.probes} not 200; backends' max RSS ${rss} MiB; serve ${serve.alive() ? "up" : "DOWN"}, PostgreSQL ${pgAlive(databaseUrl) ? "up" : "DOWN"}`,
    );
  }
  const after = await timed(serve.url, "POST", "/ns/wide/search", { query: "glaze" });
  log(`afterwards a plain search: ${after.status} in ${after.ms} ms`);
} finally {
  await serve.close();
  if (!serve.alive()) log(serve.output().split("\n").slice(-5).join("\n"));
  rmSync(dir, { recursive: true, force: true });
}
