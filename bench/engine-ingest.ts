/**
 * Ingest throughput of the embedded engine without an embedder: how fast short documents are
 * accepted and how fast they reach `done`: in-process (engine.fetch), and over HTTP to `memctx serve`
 * running as its own process (single adds, and v3 batches of 100). Prints figures; asserts nothing.
 *
 *   npx tsx bench/engine-ingest.ts [--docs 2000] [--concurrency 16] [--workers 2]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { MemoryClient } from "../src/client/index.js";
import { openEngine } from "../src/engine/index.js";

/** What the bench reads of a store: SQLite's own connection, or the engine's. */
type Db = { prepare(sql: string): { get(): unknown } };

const { values } = parseArgs({
  options: {
    docs: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "16" },
    workers: { type: "string", default: "2" },
  },
});
const DOCS = Number(values.docs);
const CONCURRENCY = Number(values.concurrency);
const WORKERS = Number(values.workers);
const KEY = "mk_bench_key_0123456789";

const text = (i: number) =>
  `Note ${i}: the team met on Tuesday to review the quarterly roadmap, agreed to ship the search ` +
  `feature first and to revisit pricing next month. Owner: person ${i % 37}.`;

async function doneCount(db: Db): Promise<number> {
  return (
    (await db.prepare("SELECT count(*) AS n FROM documents WHERE status = 'done'").get()) as { n: number }
  ).n;
}

type Add = (i: number) => Promise<void>;

async function run(label: string, db: Db, add: Add, perCall = 1) {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < DOCS) {
        const i = next;
        next += perCall;
        await add(i);
      }
    }),
  );
  const tAdded = performance.now();
  while ((await doneCount(db)) < DOCS) await new Promise((r) => setTimeout(r, 10));
  const tDone = performance.now();
  const s = (ms: number) => ms / 1000;
  console.log(
    `${label.padEnd(16)} ${DOCS} docs, concurrency ${CONCURRENCY}, workers ${WORKERS}: ` +
      `accepted ${(DOCS / s(tAdded - t0)).toFixed(0)}/s; all done after ${s(tDone - t0).toFixed(2)} s = ` +
      `${(DOCS / s(tDone - t0)).toFixed(0)} docs/s to done`,
  );
}

/** `memctx serve` as its own process, as a real client would see it. */
async function serveChild(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/cli/main.ts",
      "serve",
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--workers",
      String(WORKERS),
    ],
    { env: { ...process.env, MEMCTX_API_KEY: KEY }, stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", () => reject(new Error(`memctx serve exited: ${out}`)));
  });
  return { url, child };
}

const fresh = () => mkdtempSync(join(tmpdir(), "memctx-bench-"));

async function main() {
  console.log(
    `node ${process.version}; no embedder; WAL, synchronous=NORMAL; ${cpus().length} CPUs, load ${loadavg()[0]!.toFixed(1)}`,
  );
  {
    const dir = fresh();
    const engine = await openEngine({ dataDir: dir, apiKey: KEY, workers: WORKERS, embedder: null });
    const client = new MemoryClient({ apiKey: KEY, fetch: engine.fetch });
    await run("in-process", engine.context.db, async (i) => {
      await client.ns("bench").documents.add({ content: text(i), metadata: { i } });
    });
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
  for (const mode of ["http", "http batch(100)"] as const) {
    const dir = fresh();
    const { url, child } = await serveChild(dir);
    const db = new DatabaseSync(join(dir, "memctx.db"), { readOnly: true });
    const client = new MemoryClient({ baseUrl: url, apiKey: KEY });
    if (mode === "http") {
      await run(mode, db, async (i) => {
        await client.ns("bench").documents.add({ content: text(i), metadata: { i } });
      });
    } else {
      await run(
        mode,
        db,
        async (i) => {
          const n = Math.min(100, DOCS - i);
          const documents = Array.from({ length: n }, (_, k) => ({
            content: text(i + k),
            metadata: { i: i + k },
          }));
          await client.batch.add({ containerTag: "bench", documents });
        },
        100,
      );
    }
    await client.close();
    db.close();
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
