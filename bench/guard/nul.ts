/**
 * NUL characters (and an unpaired surrogate) wherever a request carries text, against a
 * `memctx serve` child (on PostgreSQL with --database-url): each request's status, none 5xx.
 *   npx tsx bench/guard/nul.ts [--database-url postgres://…]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { log, startServe, timed } from "./serve.js";

const { values } = parseArgs({ options: { "database-url": { type: "string" } } });
const env: Record<string, string> = {};
if (values["database-url"]) {
  const u = values["database-url"];
  env.MEMCTX_DATABASE_URL = `${u}${u.includes("?") ? "&" : "?"}schema=guard_nul_${process.pid}`;
}
const NUL = "a\u0000b";
const requests: [string, string, string, unknown?][] = [
  ["content", "POST", "/ns/nul/document", { content: NUL }],
  ["id", "POST", "/ns/nul/document", { content: "x", id: NUL }],
  ["supportingContext", "POST", "/ns/nul/document", { content: "x", supportingContext: NUL }],
  ["metadata value", "POST", "/ns/nul/document", { content: "x", metadata: { k: NUL } }],
  ["v3 customId", "POST", "/v3/documents", { content: "x", containerTag: "nul", customId: NUL }],
  ["v3 entityContext", "POST", "/v3/documents", { content: "x", containerTag: "nul", entityContext: NUL }],
  ["batch content", "POST", "/v3/documents/batch", { containerTag: "nul", documents: [NUL] }],
  [
    "conversationId",
    "POST",
    "/v4/conversations",
    { conversationId: NUL, containerTags: ["nul"], messages: [{ role: "user", content: "hi" }] },
  ],
  ["v4 memory", "POST", "/v4/memories", { containerTag: "nul", memories: [{ content: NUL }] }],
  ["search query", "POST", "/ns/nul/search", { query: NUL }],
  ["v4 search q", "POST", "/v4/search", { q: NUL, containerTag: "nul" }],
  ["forget query", "DELETE", "/ns/nul/memories/semantic", { query: NUL, dryRun: true }],
  ["namespace context", "PATCH", "/ns/nul", { supportingContext: NUL }],
  ["organization context", "PATCH", "/organization", { organizationalContext: NUL }],
  ["path id (%00)", "GET", "/ns/nul/document/a%00b"],
  ["v3 path id (%00)", "GET", "/v3/documents/a%00b"],
  ["memory path id (%00)", "GET", "/ns/nul/memories/a%00b"],
  ["lone surrogate", "POST", "/ns/nul/document", { content: "a\ud800b" }],
];

const dir = mkdtempSync(join(tmpdir(), "guard-nul-"));
const serve = await startServe(dir, env);
try {
  const out: string[] = [];
  for (const [what, method, path, body] of requests) {
    const r = await timed(serve.url, method, path, body);
    out.push(`${what} ${r.status}`);
  }
  const fivexx = out.filter((o) => / 5\d\d$/.test(o));
  log(
    `${out.join("; ")}\n${requests.length} requests, ${fivexx.length} answered 5xx; serve ${serve.alive() ? "up" : "DOWN"}`,
  );
} finally {
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
}
