/**
 * memctx's benchmark suite: recall on LoCoMo, side by side with the reference MCP memory server,
 * ingest, and search / profile / memory / cold start at growing sizes, each within a time budget.
 * Writes bench/results/<date>.json, <date>.md and the report's SVG charts.
 *
 *   npm run bench [-- --quick] [-- --only recall,side-by-side,ingest,replicas,speed] [-- --out DIR]
 *   npm run bench -- --backend postgres [--database-url postgres://...]   (the same on PostgreSQL,
 *     default URL MEMCTX_BENCH_DATABASE_URL or MEMCTX_DATABASE_URL; files <date>[-quick]-postgres.*)
 *   npm run bench -- --render bench/results/<date>.json   (the report again from saved figures)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, platform, release } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadSamples } from "./locomo/data.js";
import { Budget, checkPostgres, memctxCommand, ROOT, setBackend } from "./suite/common.js";
import { benchIngest } from "./suite/ingest.js";
import { benchRecall, type LocomoStore } from "./suite/recall.js";
import { benchReplicas } from "./suite/replicas.js";
import { growth, renderReport, type SuiteResults } from "./suite/report.js";
import { serverMemoryEntry } from "./suite/server-memory.js";
import { benchSideBySide } from "./suite/side-by-side.js";
import { benchSpeed } from "./suite/speed.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    out: { type: "string", default: join(ROOT, "bench/results") },
    render: { type: "string" },
    backend: { type: "string", default: "sqlite" },
    "database-url": { type: "string" },
  },
});

// --render FILE.json: the report again from a run's figures (after a change to report.ts), nothing measured.
if (values.render) {
  const file = resolve(values.render);
  const saved = JSON.parse(readFileSync(file, "utf8")) as SuiteResults;
  saved.growth = growth(saved.speed);
  const stem = basename(file, ".json");
  const { markdown, svgs } = renderReport(saved, stem);
  writeFileSync(join(dirname(file), `${stem}.md`), markdown);
  for (const [name, svg] of Object.entries(svgs))
    writeFileSync(join(dirname(file), `${stem}-${name}.svg`), svg);
  process.stderr.write(`rendered ${stem}.md from ${relative(ROOT, file)}\n`);
  process.exit(0);
}
// --backend: every benchmark's store on SQLite (a data directory) or on PostgreSQL (a schema of
// its own in the given database, dropped afterwards). The variable is taken out of the
// environment either way, so the engines and children this run starts use only what is chosen here.
const fallbackUrl = process.env.MEMCTX_BENCH_DATABASE_URL || process.env.MEMCTX_DATABASE_URL || undefined;
delete process.env.MEMCTX_DATABASE_URL;
if (values.backend !== "sqlite" && values.backend !== "postgres") {
  process.stderr.write(`--backend must be sqlite or postgres, not "${values.backend}"\n`);
  process.exit(2);
}
if (values.backend === "postgres") {
  const url = values["database-url"] ?? fallbackUrl;
  if (!url) {
    process.stderr.write(
      "--backend postgres needs a database: --database-url postgres://user:pass@host:5432/db, or " +
        "MEMCTX_BENCH_DATABASE_URL / MEMCTX_DATABASE_URL (each benchmark uses a schema of its own there)\n",
    );
    process.exit(2);
  }
  const why = await checkPostgres(url);
  if (why) {
    process.stderr.write(`--backend postgres: cannot use ${url.replace(/\/\/[^@/]*@/, "//…@")}: ${why}\n`);
    process.exit(2);
  }
  setBackend(url);
} else if (values["database-url"]) {
  process.stderr.write("--database-url is for --backend postgres\n");
  process.exit(2);
}
const backend = values.backend;
const quick = values.quick;
const only = values.only ? new Set(values.only.split(",")) : null;
// Side by side searches the engine that recall fills.
if (only?.has("side-by-side")) only.add("recall");
const want = (name: string) => only === null || only.has(name);

// Seconds each benchmark may take; it stops early and reports what it measured.
const BUDGETS = quick
  ? { recall: 45, "side-by-side": 45, ingest: 25, replicas: 60, speed: 120 }
  : { recall: 300, "side-by-side": 300, ingest: 120, replicas: 300, speed: 1200 };
const SIZES = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
const QUERIES = quick ? 100 : 300;
const COLD_STARTS = quick ? 1 : 3;
const INGEST_DOCUMENTS = quick ? 200 : 1000;
const REPLICA_DOCUMENTS = quick ? 200 : 600;

const log = (s: string) => process.stderr.write(`${s}\n`);
const started = performance.now();
const date = new Date().toISOString().slice(0, 10);
const results: SuiteResults = {
  date,
  quick,
  backend,
  machine: {
    node: process.version,
    cpus: cpus().length,
    loadAverage: loadavg()[0]!,
    platform: `${platform()} ${release()}`,
  },
  children: "",
  budgetsSeconds: {},
  secondsTaken: {},
  errors: {},
};

/** Runs a benchmark within its budget; `prepare` (a download, say) runs first, outside the budget. */
async function timed<T, P = undefined>(
  name: keyof typeof BUDGETS,
  fn: (b: Budget, prepared: P) => Promise<T>,
  prepare?: () => Promise<P>,
): Promise<T | undefined> {
  if (!want(name)) return undefined;
  const prepared = (await prepare?.()) as P;
  const budget = new Budget(BUDGETS[name]);
  results.budgetsSeconds[name] = BUDGETS[name];
  log(`${name} (budget ${BUDGETS[name]} s)...`);
  const t0 = performance.now();
  try {
    return await fn(budget, prepared);
  } catch (err) {
    results.errors[name] = err instanceof Error ? (err.stack ?? err.message) : String(err);
    log(`${name} failed: ${results.errors[name]}`);
    return undefined;
  } finally {
    results.secondsTaken[name] = (performance.now() - t0) / 1000;
    log(`${name}: ${results.secondsTaken[name]!.toFixed(1)} s`);
  }
}

const cli = await memctxCommand(log);
results.children = cli.how;
const all = loadSamples();
// Quick: one conversation (conv-26); the full run: the whole dev split.
const samples = all && quick ? all.slice(0, 1) : all;
let store: LocomoStore | null = null;
try {
  {
    const r = await timed("recall", async (b) => await benchRecall(samples, b));
    if (r) {
      results.recall = r.result;
      store = r.store;
    }
  }
  results.sideBySide = await timed(
    "side-by-side",
    async (b, fetched) => await benchSideBySide(samples, store, cli.args, b, fetched),
    // The reference server is fetched (npx) before the budget starts.
    serverMemoryEntry,
  );
  results.ingest = await timed("ingest", async (b) => await benchIngest(INGEST_DOCUMENTS, b));
  results.replicas = await timed(
    "replicas",
    async (b) => await benchReplicas(cli.args, REPLICA_DOCUMENTS, b),
  );
  results.speed = await timed(
    "speed",
    async (b) => await benchSpeed(SIZES, QUERIES, COLD_STARTS, cli.args, b, log),
  );
  results.growth = growth(results.speed);
} finally {
  await store?.close();
}

const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const stem = `${date}${quick ? "-quick" : ""}${backend === "postgres" ? "-postgres" : ""}`;
const { markdown, svgs } = renderReport(results, stem);
writeFileSync(join(out, `${stem}.json`), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(join(out, `${stem}.md`), markdown);
for (const [name, svg] of Object.entries(svgs)) writeFileSync(join(out, `${stem}-${name}.svg`), svg);
log(
  `wrote ${relative(ROOT, join(out, `${stem}.md`))} and .json in ${((performance.now() - started) / 1000).toFixed(0)} s total`,
);
process.exit(Object.keys(results.errors).length > 0 ? 1 : 0);
