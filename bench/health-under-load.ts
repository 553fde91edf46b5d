/**
 * How long `/health` and a search take on a `memctx serve` child while it processes one large
 * plain-text document (extraction, chunking, indexing and dreaming):
 *   npx tsx bench/health-under-load.ts [--mb 3] [--threads|--no-threads]
 * Prints the max and p95 latency of /health (polled every 20 ms) and of a small search (every
 * 100 ms) from the add to memories ready, and how long processing took.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { API_KEY, memctxCommand, percentiles, startServe } from "./suite/common.js";

const { values } = parseArgs({
  options: { mb: { type: "string", default: "3" }, "no-threads": { type: "boolean", default: false } },
});

/** Varied English sentences (a seeded generator), about `bytes` long. */
function largeText(bytes: number): string {
  const names = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana"];
  const verbs = ["visited", "painted", "repaired", "studied", "planned", "cooked", "described", "recorded"];
  const things = [
    "the harbour",
    "a bicycle",
    "the garden",
    "an old map",
    "the bakery",
    "a violin",
    "the roof",
  ];
  const when = ["on Monday", "last spring", "in 2021", "after lunch", "every Sunday", "in March 2023"];
  let seed = 42;
  const pick = <T>(xs: T[]) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return xs[seed % xs.length]!;
  };
  const parts: string[] = [];
  let size = 0;
  let n = 0;
  while (size < bytes) {
    const s = `${pick(names)} ${pick(verbs)} ${pick(things)} ${pick(when)} (note ${n++}).`;
    parts.push(n % 8 === 0 ? `${s}\n\n` : `${s} `);
    size += s.length + 1;
  }
  return parts.join("");
}

const log = (s: string) => process.stderr.write(`${s}\n`);
const { args } = await memctxCommand(log);
const dir = mkdtempSync(join(tmpdir(), "memctx-health-"));
const env = values["no-threads"] ? { MEMCTX_THREADS: "0" } : {};
Object.assign(process.env, env);
const serve = await startServe(args, dir, 2);
const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" };
try {
  const text = largeText(Number(values.mb) * 1024 * 1024);
  await fetch(`${serve.url}/ns/small/document`, {
    method: "POST",
    headers,
    body: JSON.stringify({ content: "Dana lives in Lisbon and prefers TypeScript.", id: "s" }),
  });
  await new Promise((r) => setTimeout(r, 1000));
  const started = performance.now();
  const added = (await (
    await fetch(`${serve.url}/ns/big/document`, {
      method: "POST",
      headers,
      body: JSON.stringify({ content: text }),
    })
  ).json()) as { id: string };
  const health: number[] = [];
  const searches: number[] = [];
  let done = false;
  let lastSearch = 0;
  let status = "";
  while (!done && performance.now() - started < 600_000) {
    const t = performance.now();
    await fetch(`${serve.url}/health`);
    health.push(performance.now() - t);
    if (t - lastSearch > 100) {
      lastSearch = t;
      const s = performance.now();
      await fetch(`${serve.url}/ns/small/search`, {
        method: "POST",
        headers,
        body: JSON.stringify({ query: "Lisbon" }),
      });
      searches.push(performance.now() - s);
      const doc = (await (await fetch(`${serve.url}/ns/big/document/${added.id}`, { headers })).json()) as {
        system: { status: string; dreamingStatus: string };
      };
      status = `${doc.system.status}/${doc.system.dreamingStatus}`;
      done =
        doc.system.status === "failed" ||
        (doc.system.status === "done" && doc.system.dreamingStatus === "done");
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const h = percentiles(health);
  const s = percentiles(searches);
  console.log(
    `${values.mb} MB document, ${values["no-threads"] ? "jobs in the request thread" : "jobs in worker threads"}: ` +
      `processed to ${status} in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
      `/health max ${Math.max(...health).toFixed(1)} ms, p95 ${h.p95.toFixed(1)} ms (${health.length} probes); ` +
      `search max ${Math.max(...searches).toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms`,
  );
} finally {
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
}
