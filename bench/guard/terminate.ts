/**
 * PostgreSQL ends memctx's connections while it writes (pg_terminate_backend of every backend
 * named memctx, run against a cluster of the probe's own: every memctx backend there is ours):
 *   npx tsx bench/guard/terminate.ts --database-url postgres://… [--rounds 10] [--kb 200]
 * Each round sends eight adds of `--kb` KB at once and ends memctx's backends four times while they run.
 * Prints how the adds ended per round, whether `memctx serve` lives, and that /health, an add
 * and a search answer afterwards.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { log, startServe, timed } from "./serve.js";

const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    rounds: { type: "string", default: "10" },
    kb: { type: "string", default: "200" },
  },
});
const databaseUrl = values["database-url"];
if (!databaseUrl) throw new Error("--database-url is required");
const schema = `guard_terminate_${process.pid}`;
const url = `${databaseUrl}${databaseUrl.includes("?") ? "&" : "?"}schema=${schema}`;

const sentence = (i: number) => `Entry ${i}: the ferry to Vigo left at ${i % 24}:15 with ${i % 90} cars. `;
const text = (seed: number) => {
  const parts: string[] = [];
  let size = 0;
  for (let i = seed; size < Number(values.kb) * 1024; i++) {
    const s = sentence(i);
    parts.push(s);
    size += s.length;
  }
  return parts.join("");
};

const terminateAll = () =>
  execFileSync(
    "psql",
    [
      databaseUrl,
      "-Atc",
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'memctx' AND pid <> pg_backend_pid()",
    ],
    { encoding: "utf8" },
  ).trim();

const dir = mkdtempSync(join(tmpdir(), "guard-terminate-"));
const serve = await startServe(dir, { MEMCTX_DATABASE_URL: url });
try {
  let died = false;
  for (let round = 0; round < Number(values.rounds) && !died; round++) {
    const adds = Array.from({ length: 8 }, (_, i) =>
      timed(serve.url, "POST", "/ns/ferry/document", {
        content: text(round * 10_000 + i * 1000),
        id: `r${round}-${i}`,
      }),
    );
    // While the adds run, end every connection memctx has, a few times over.
    let ended = 0;
    for (let k = 0; k < 4; k++) {
      await new Promise((r) => setTimeout(r, 10 + 15 * k));
      ended += Number(terminateAll());
    }
    const results = await Promise.all(adds);
    died = !serve.alive();
    log(
      `round ${round + 1}: ended ${ended} backends; adds ${results.map((r) => `${r.status}/${r.ms}ms`).join(" ")}; serve ${died ? "DOWN" : "up"}`,
    );
  }
  if (!died) {
    const health = await timed(serve.url, "GET", "/health");
    const add = await timed(serve.url, "POST", "/ns/ferry/document", {
      content: "The last ferry left at noon.",
      id: "after",
    });
    const search = await timed(serve.url, "POST", "/ns/ferry/search", { query: "ferry Vigo" });
    log(`afterwards: /health ${health.status}, add ${add.status}, search ${search.status} (${search.ms} ms)`);
  } else {
    log(serve.output().split("\n").slice(-15).join("\n"));
  }
} finally {
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
}
