/**
 * Long queries in a populated namespace, and /health meanwhile:
 *   npx tsx bench/guard/long-query.ts [--chars 4000] [--docs 200] [--database-url postgres://…]
 * Stores `--docs` notes of varied words (SQLite in a temp data directory, or a schema of its own
 * on PostgreSQL), then sends searches (v5 hybrid, v4), a v4 profile with `q` and a forget-by-
 * meaning dry run whose query is `--chars` characters of the namespace's own words, while /health
 * is polled every 50 ms. Prints each request's status and time and /health's longest answer.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { log, pollHealthApart, ROOT, startServe, timed, waitProcessed } from "./serve.js";

const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    chars: { type: "string", default: "4000" },
    docs: { type: "string", default: "200" },
  },
});
const env: Record<string, string> = {};
if (values["database-url"]) {
  const u = values["database-url"];
  env.MEMCTX_DATABASE_URL = `${u}${u.includes("?") ? "&" : "?"}schema=guard_query_${process.pid}`;
}

// Words WordNet expands (the heads of the shipped table), so that a query's words each bring more.
const WORDS = readFileSync(join(ROOT, "assets/wordnet-expansions.tsv"), "utf8")
  .split("\n")
  .map((l) => l.split("\t")[0]!)
  .filter((w) => /^[a-z]{4,}$/.test(w))
  .filter((_, i) => i % 7 === 0)
  .slice(0, 3000);
const NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana"];
let seed = 7;
const pick = <T>(xs: readonly T[]) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return xs[seed % xs.length]!;
};
const note = (i: number) =>
  `${Array.from(
    { length: 6 },
    () => `${pick(NAMES)} visited the ${pick(WORDS)} near the ${pick(WORDS)}.`,
  ).join(" ")} (note ${i})`;

const dir = mkdtempSync(join(tmpdir(), "guard-query-"));
const serve = await startServe(dir, env);
try {
  const docs = Number(values.docs);
  for (let i = 0; i < docs; i += 50) {
    const batch = Array.from({ length: Math.min(50, docs - i) }, (_, k) => note(i + k));
    await timed(serve.url, "POST", "/v3/documents/batch", {
      containerTag: "long",
      documents: batch,
      dreaming: "instant",
    });
  }
  const processed = (await waitProcessed(serve.url, "long")).split(",");
  log(`${docs} notes: ${processed.filter((s) => s === "done").length} done`);
  const chars = Number(values.chars);
  let query = "";
  while (query.length < chars) query += `${pick(NAMES)} ${pick(WORDS)} `;
  query = query.slice(0, chars);
  for (const [what, method, path, body] of [
    ["v5 search", "POST", "/ns/long/search", { query }],
    ["v4 search", "POST", "/v4/search", { q: query, containerTag: "long" }],
    ["v4 profile q", "POST", "/v4/profile", { q: query, containerTag: "long" }],
    ["forget dry run", "DELETE", "/ns/long/memories/semantic", { query, dryRun: true }],
  ] as const) {
    const health = pollHealthApart(serve.url, 50);
    const r = await timed(serve.url, method, path, body, 120_000);
    const h = await health.stop();
    log(
      `${what} (${chars} chars): ${r.status} in ${r.ms} ms ${r.status === 200 ? "" : r.text.slice(0, 160)}; /health max ${h.maxMs} ms over ${h.probes} probes`,
    );
  }
} finally {
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
}
