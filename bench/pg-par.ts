/**
 * PostgreSQL against SQLite on a fresh, small store, back to back (issue 36): `memctx serve` (one
 * replica, serve's default processing) is given 200 ten-turn conversations over HTTP, 8 at a time,
 * into one namespace; the time from the first add until every document is `done` with its
 * memories (`dreamingStatus: done`) is its ingest; then 200 varied questions (LoCoMo's, shuffled)
 * are searched over HTTP one at a time (hybrid, limit 10, after 10 untimed): p50 / p95.
 *   npx tsx bench/pg-par.ts [--pairs 3] [--documents 200] [--queries 200]
 *     [--database-url postgres://memctx_ci:memctx_ci@127.0.0.1:5432/postgres] [--profile DIR]
 * Each PostgreSQL run gets a database of its own, made for it and dropped after it
 * (`CREATE DATABASE … TEMPLATE template0 LOCALE 'C.UTF-8'` through `runuser -u postgres -- psql`,
 * as root; the URL's role owns it): a store as fresh as a new deployment's, no statistics yet. Each
 * SQLite run a data directory of its own. The backends alternate in each pair (S P, then P S, …)
 * so that the machine's other work falls on both; every pair is printed, then the medians.
 * Before each run a CHECKPOINT flushes what the last one wrote (and dropped), so that no run pays
 * for another's. `--keep`: each run's database or data directory is kept (printed).
 * `--profile DIR`: the servers' statements by time (MEMCTX_PG_PROFILE) in DIR. `--only postgres`
 * (or sqlite): runs of that backend alone, for an experiment. `--cpu`: the CPU seconds the server's
 * threads and PostgreSQL's processes spent during each ingest (Linux).
 * The command is the built one (dist/cli/main.js: `npm run build` first).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openDatabase } from "../src/engine/store/db.js";
import { API_KEY, Budget, percentiles, ROOT, startServe } from "./suite/common.js";
import { Corpus } from "./suite/corpus.js";

const { values } = parseArgs({
  options: {
    pairs: { type: "string", default: "3" },
    documents: { type: "string", default: "200" },
    queries: { type: "string", default: "200" },
    "database-url": { type: "string", default: "postgres://memctx_ci:memctx_ci@127.0.0.1:5432/postgres" },
    profile: { type: "string" },
    /** One backend only (an experiment, not a comparison): each "pair" is one run of it. */
    only: { type: "string" },
    /** Keeps each run's PostgreSQL database or SQLite data directory (printed) to look into afterwards. */
    keep: { type: "boolean", default: false },
    /** Where the CPU went during ingest (Linux /proc): the server's threads and PostgreSQL's processes. */
    cpu: { type: "boolean", default: false },
  },
});

const CONCURRENCY = 8;
const NAMESPACE = "par";
const LIMIT = 10;
const WARMUP = 10;
const cli = [join(ROOT, "dist/cli/main.js")];
if (!existsSync(cli[0]!)) throw new Error("build first: npm run build");

interface Run {
  backend: "sqlite" | "postgres";
  ingestSeconds: number;
  /** Until every document was `done` (indexed), before their memories. */
  indexedSeconds: number;
  docsPerSecond: number;
  memories: number;
  p50: number;
  p95: number;
}

const psql = (sql: string) =>
  execFileSync("runuser", ["-u", "postgres", "--", "psql", "-qAt", "-c", sql], { encoding: "utf8" });

/**
 * CPU seconds so far of the server's threads (by thread name) and of every PostgreSQL process
 * together, from /proc (Linux only): where an ingest's time goes on a machine it saturates.
 */
function cpuSeconds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  const ticks = (stat: string) => {
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  const add = (k: string, v: number) => out.set(k, (out.get(k) ?? 0) + v);
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim();
      add(`serve:${name}`, ticks(readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8")));
    } catch {}
  }
  for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      if (readFileSync(`/proc/${p}/comm`, "utf8").trim() === "postgres")
        add("postgres", ticks(readFileSync(`/proc/${p}/stat`, "utf8")));
    } catch {}
  }
  return out;
}

let made = 0;
async function once(
  backend: Run["backend"],
  corpus: Corpus,
  documents: number,
  queries: string[],
): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "memctx-pg-par-"));
  const owner = new URL(values["database-url"]).username;
  const database = `memctx_bench36_${process.pid}_${++made}`;
  const url = new URL(values["database-url"]);
  url.pathname = `/${database}`;
  const env: Record<string, string> = { MEMCTX_SECRET_KEY: "bench-pg-par" };
  if (backend === "postgres") {
    psql(`CREATE DATABASE ${database} OWNER ${owner} TEMPLATE template0 LOCALE 'C.UTF-8'`);
    env.MEMCTX_DATABASE_URL = url.toString();
  }
  if (values.profile) {
    mkdirSync(values.profile, { recursive: true });
    env.MEMCTX_PG_PROFILE = join(values.profile, `${backend}-${made}`);
  }
  // The last run's writes (and its dropped database) flushed now, not during this run: a
  // checkpoint that falls inside one backend's run slows that run alone.
  psql("CHECKPOINT");
  const server = await startServe(cli, dir, 2, env);
  const db = await openDatabase(dir, backend === "postgres" ? { databaseUrl: url.toString() } : {});
  try {
    const ready = db.prepare(
      "SELECT count(*) AS n FROM documents WHERE status IN ('done', 'failed') AND dreaming_status = 'done'",
    );
    const docs = Array.from({ length: documents }, (_, i) => corpus.document(i));
    const cpu0 = values.cpu ? cpuSeconds(server.pid) : undefined;
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < docs.length) {
          const d = docs[next++]!;
          const res = await fetch(`${server.url}/ns/${NAMESPACE}/document`, {
            method: "POST",
            headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
            body: JSON.stringify({ content: d.text, date: d.date }),
          });
          if (res.status !== 200) throw new Error(`add: ${res.status} ${await res.text()}`);
        }
      }),
    );
    const addedSeconds = (performance.now() - t0) / 1000;
    const indexed = db.prepare("SELECT count(*) AS n FROM documents WHERE status IN ('done', 'failed')");
    let indexedSeconds = 0;
    // With --cpu, when each quarter of the documents was indexed and had its memories.
    const quarters = [`added in ${addedSeconds.toFixed(1)} s`];
    for (let seen = 0; ; ) {
      const n = ((await indexed.get()) as { n: number }).n;
      if (!indexedSeconds && n >= documents) indexedSeconds = (performance.now() - t0) / 1000;
      const r = ((await ready.get()) as { n: number }).n;
      for (; seen < 4 && r >= (documents * (seen + 1)) / 4; seen++)
        quarters.push(
          `${(seen + 1) * 25}% ready at ${((performance.now() - t0) / 1000).toFixed(1)} s (${n} indexed)`,
        );
      if (r >= documents) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const ingestSeconds = (performance.now() - t0) / 1000;
    if (cpu0) {
      const cpu1 = cpuSeconds(server.pid);
      const spent = [...cpu1]
        .map(([k, v]) => [k, v - (cpu0.get(k) ?? 0)] as const)
        .filter(([, v]) => v >= 0.05)
        .map(([k, v]) => `${k} ${v.toFixed(1)} s`);
      process.stdout.write(`${backend} ingest CPU: ${spent.join(", ")}; ${quarters.join(", ")}\n`);
    }
    if (!indexedSeconds) indexedSeconds = ingestSeconds;
    const memories = (
      (await db.prepare("SELECT count(*) AS n FROM memories WHERE is_latest = 1").get()) as { n: number }
    ).n;
    const search = async (query: string) => {
      const res = await fetch(`${server.url}/ns/${NAMESPACE}/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ query, limit: LIMIT, searchMode: "hybrid" }),
      });
      if (res.status !== 200) throw new Error(`search: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    for (const q of queries.slice(0, WARMUP)) await search(q);
    const ms: number[] = [];
    for (const q of queries) {
      const t = performance.now();
      await search(q);
      ms.push(performance.now() - t);
    }
    const p = percentiles(ms);
    return {
      backend,
      ingestSeconds,
      indexedSeconds,
      docsPerSecond: documents / ingestSeconds,
      memories,
      p50: p.p50,
      p95: p.p95,
    };
  } finally {
    await db.close();
    await server.close();
    if (values.keep) {
      // The data directory holds the server's settings (and SQLite's files): kept with the database.
      const what = backend === "postgres" ? `database ${database}, data directory` : "data directory";
      process.stdout.write(`kept ${what} ${dir}\n`);
    } else {
      rmSync(dir, { recursive: true, force: true });
      if (backend === "postgres") psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    }
  }
}

const corpus = new Corpus();
const queries = corpus.questions.slice(0, Number(values.queries));
const documents = Number(values.documents);
const pairs = Number(values.pairs);
void Budget;
const f = (x: number, d = 1) => x.toFixed(d);
const rows: { sqlite: Run; postgres: Run }[] = [];
for (let k = 0; k < pairs; k++) {
  const order: Run["backend"][] = values.only
    ? [values.only as Run["backend"]]
    : k % 2 === 0
      ? ["sqlite", "postgres"]
      : ["postgres", "sqlite"];
  const pair: Partial<Record<Run["backend"], Run>> = {};
  for (const b of order) {
    const r = await once(b, corpus, documents, queries);
    pair[b] = r;
    process.stdout.write(
      `pair ${k + 1} ${b}: indexed in ${f(r.indexedSeconds)} s, ingest to memories ready ${f(r.ingestSeconds)} s (${f(r.docsPerSecond)} docs/s, ${r.memories} memories), search p50 ${f(r.p50)} ms p95 ${f(r.p95)} ms\n`,
    );
  }
  if (values.only) continue;
  const s = pair.sqlite!;
  const p = pair.postgres!;
  rows.push({ sqlite: s, postgres: p });
  process.stdout.write(
    `pair ${k + 1} (${order.join(" then ")}): PostgreSQL ingest ${f(p.docsPerSecond / s.docsPerSecond, 2)}x SQLite's, search p50 ${f(p.p50 / s.p50, 2)}x\n`,
  );
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
if (rows.length > 0)
  process.stdout.write(
    `median over ${rows.length} pairs: ingest ${f(median(rows.map((r) => r.postgres.docsPerSecond / r.sqlite.docsPerSecond)), 2)}x, search p50 ${f(median(rows.map((r) => r.postgres.p50 / r.sqlite.p50)), 2)}x\n`,
  );
