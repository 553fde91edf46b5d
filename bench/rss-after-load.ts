/**
 * Resident memory of a `memctx serve` child before, during and after a load of many clients (the
 * audit: 16 clients, 245 req/s for 60 s took RSS from 242 to 700 MB, still 717 MB 50 s later):
 *   npx tsx bench/rss-after-load.ts [--clients 16] [--rate 245] [--seconds 60] [--after 30]
 *                                   [--workers 2] [--breakdown] [--snapshots DIR]
 * Each client asks in turn (search, add, list, profile, legacy search, health) on a namespace of
 * its own, paced so that all together make about --rate requests a second; the load stops after
 * --seconds or rate x seconds x 1.2 requests, whichever comes first; 127.0.0.1 only.
 * Prints VmRSS (/proc/<pid>/status) at start (after a warm-up), its peak, at the end of the load
 * and every 5 s of the --after seconds, and the ratio of the last to the start (the bound: 1.3);
 * the slowest /health answer of those seconds (polled every 100 ms) shows what trimming costs.
 * --breakdown has the child print process.memoryUsage() (heap, external, arrayBuffers) every
 * second, shown beside RSS; --snapshots DIR writes a heap snapshot at start and at the end
 * (--heapsnapshot-signal) for Chrome DevTools' comparison view.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { API_KEY, memctxCommand, percentiles, rssMiB, startServe } from "./suite/common.js";

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "16" },
    rate: { type: "string", default: "245" },
    seconds: { type: "string", default: "60" },
    after: { type: "string", default: "30" },
    workers: { type: "string", default: "2" },
    breakdown: { type: "boolean", default: false },
    snapshots: { type: "string" },
  },
});
const CLIENTS = Number(values.clients);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const AFTER = Number(values.after);
const MAX_REQUESTS = Math.ceil(RATE * SECONDS * 1.2);

const log = (s: string) => process.stderr.write(`${s}\n`);
const { args } = await memctxCommand(log);
const dir = mkdtempSync(join(tmpdir(), "memctx-rss-load-"));

// --breakdown: a preload that prints the child's own memory figures, which /proc cannot split.
const env: Record<string, string> = {};
const nodeOptions: string[] = [];
const usageFile = join(dir, "memory-usage.json");
if (values.breakdown) {
  const preload = join(dir, "memory-usage.mjs");
  writeFileSync(
    preload,
    `import { writeFileSync } from "node:fs";\n` +
      `setInterval(() => writeFileSync(${JSON.stringify(usageFile)}, JSON.stringify(process.memoryUsage())), 1000).unref();\n`,
  );
  nodeOptions.push(`--import=${preload}`);
}
const snapshots = values.snapshots ? resolve(values.snapshots) : undefined;
if (snapshots) {
  mkdirSync(snapshots, { recursive: true });
  nodeOptions.push("--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${snapshots}`);
}
if (nodeOptions.length) env.NODE_OPTIONS = [process.env.NODE_OPTIONS ?? "", ...nodeOptions].join(" ").trim();

const serve = await startServe(args, join(dir, "data"), Number(values.workers), env);
const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" };
const MiB = (b: number | undefined) => (b === undefined ? "-" : (b / 1048576).toFixed(0));
/** The child's own figures (--breakdown), as its preload last wrote them. */
const usage = () => {
  if (!values.breakdown) return "";
  try {
    const u = JSON.parse(readFileSync(usageFile, "utf8")) as Record<string, number>;
    return `  heapUsed ${MiB(u.heapUsed)} heapTotal ${MiB(u.heapTotal)} external ${MiB(u.external)} arrayBuffers ${MiB(u.arrayBuffers)} MiB`;
  } catch {
    return "";
  }
};

const WORDS = ["harbour", "violin", "garden", "Lisbon", "TypeScript", "bakery", "marathon", "roof", "map"];
const NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana"];
let seed = 7;
const pick = <T>(xs: readonly T[]) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return xs[seed % xs.length]!;
};
const sentence = (n: number) =>
  `${pick(NAMES)} visited the ${pick(WORDS)} with ${pick(NAMES)} on day ${n}; they talked about ${pick(WORDS)} and ${pick(WORDS)}.`;

let sent = 0;
let failed = 0;
const latencies: number[] = [];
/** One request of the mix, in turn per client. */
async function ask(client: number, i: number): Promise<void> {
  const ns = `load-${client}`;
  const kind = i % 20;
  const req: [string, string, unknown?] =
    kind < 9
      ? ["POST", `/ns/${ns}/search`, { query: `${pick(NAMES)} ${pick(WORDS)}`, limit: 10 }]
      : kind < 12
        ? ["POST", `/ns/${ns}/document`, { content: sentence(i) }]
        : kind < 14
          ? ["POST", `/ns/${ns}/list/memories`, {}]
          : kind < 16
            ? ["POST", `/ns/${ns}/profile`, {}]
            : kind < 19
              ? ["POST", "/v4/search", { q: `${pick(NAMES)} ${pick(WORDS)}`, containerTag: ns }]
              : ["GET", "/health"];
  const t = performance.now();
  sent++;
  try {
    const res = await fetch(`${serve.url}${req[1]}`, {
      method: req[0],
      headers,
      ...(req[2] === undefined ? {} : { body: JSON.stringify(req[2]) }),
    });
    await res.arrayBuffer();
    if (res.status >= 400) failed++;
  } catch {
    failed++;
  }
  latencies.push(performance.now() - t);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  // Warm-up: every client's namespace exists with a few documents, the first searches done.
  for (let c = 0; c < CLIENTS; c++) for (let i = 0; i < 20; i++) await ask(c, i);
  await sleep(10_000);
  const start = rssMiB(serve.pid)!;
  log(`start: RSS ${start} MiB${usage()}`);
  if (snapshots) process.kill(serve.pid, "SIGUSR2");
  sent = 0;
  failed = 0;
  latencies.length = 0;

  let peak = start;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMiB(serve.pid) ?? 0);
  }, 500);
  const began = performance.now();
  const until = began + SECONDS * 1000;
  const interval = (1000 * CLIENTS) / RATE;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      let next = performance.now() + (c * interval) / CLIENTS;
      for (let i = 0; performance.now() < until && sent < MAX_REQUESTS; i++) {
        await sleep(Math.max(0, next - performance.now()));
        next += interval;
        await ask(c, i + 20);
      }
    }),
  );
  clearInterval(sampler);
  const took = (performance.now() - began) / 1000;
  const end = rssMiB(serve.pid)!;
  const p = percentiles(latencies);
  log(
    `load: ${CLIENTS} clients, ${sent} requests in ${took.toFixed(1)} s (${(sent / took).toFixed(0)} req/s), ${failed} failed; ` +
      `latency p50 ${p.p50.toFixed(1)} p95 ${p.p95.toFixed(1)} p99 ${p.p99.toFixed(1)} ms`,
  );
  log(`end of load: RSS ${end} MiB (peak ${peak} MiB)${usage()}`);
  // /health polled while the server goes quiet: a heap trim pauses the serving thread once.
  const health: number[] = [];
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const t = performance.now();
      await (await fetch(`${serve.url}/health`)).arrayBuffer();
      health.push(performance.now() - t);
      await sleep(100);
    }
  })();
  let last = end;
  for (let s = 5; s <= AFTER; s += 5) {
    await sleep(5000);
    last = rssMiB(serve.pid)!;
    log(`+${s} s: RSS ${last} MiB${usage()}`);
  }
  polling = false;
  await poll;
  log(`/health after the load: ${health.length} polls, max ${Math.max(...health).toFixed(1)} ms`);
  if (snapshots) {
    process.kill(serve.pid, "SIGUSR2");
    await sleep(5000);
  }
  const ratio = last / start;
  log(
    `RSS ${AFTER} s after the load: ${last} MiB = ${ratio.toFixed(2)}x its start (${start} MiB); bound 1.3x: ${ratio <= 1.3 ? "within" : "OVER"}`,
  );
  process.exitCode = ratio <= 1.3 ? 0 : 1;
} finally {
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
}
