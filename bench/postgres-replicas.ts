/**
 * Ingest to `done` through one and through two `memctx serve` replicas on one PostgreSQL database
 * (issue 12): DOCS documents added over HTTP, spread over the replicas, 8 at a time; the time from
 * the first add until every document is `done` (read straight from the database).
 * Run: MEMCTX_BENCH_DATABASE_URL=postgres://... node --import tsx bench/postgres-replicas.ts
 * (figures, not a test; on a machine with fewer cores than replicas x processing threads the
 * replicas share the same cores).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";

const url =
  process.env.MEMCTX_BENCH_DATABASE_URL ?? "postgres://memctx_ci:memctx_ci@127.0.0.1:5432/memctx_ci";
const DOCS = Number(process.env.MEMCTX_BENCH_DOCS ?? 300);
const ROOT = resolve(import.meta.dirname, "..");
const KEY = "mk_bench_replicas_0123456789";

async function serve(
  dataDir: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "serve", "--port", "0", "--data-dir", dataDir],
    { cwd: ROOT, env: { ...process.env, ...env, MEMCTX_API_KEY: KEY }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on("data", () => {});
  const at = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`serve did not start: ${out}`)), 60_000);
    child.stdout!.on("data", () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
  });
  return { child, url: at };
}

async function run(replicas: number): Promise<number> {
  const schema = `bench_replicas_${replicas}_${process.pid}`;
  const u = new URL(url);
  u.searchParams.set("schema", schema);
  const env = { MEMCTX_DATABASE_URL: u.toString(), MEMCTX_SECRET_KEY: "bench-replicas" };
  const dirs = Array.from({ length: replicas }, () => mkdtempSync(join(tmpdir(), "memctx-bench-replica-")));
  const servers: { child: ChildProcess; url: string }[] = [];
  // One first: it migrates the schema; the others find it done.
  servers.push(await serve(dirs[0]!, env));
  servers.push(...(await Promise.all(dirs.slice(1).map((d) => serve(d, env)))));
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < DOCS) {
        const i = next++;
        const s = servers[i % servers.length]!;
        const res = await fetch(`${s.url}/ns/bench/document`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: JSON.stringify({
            content: `Bench document ${i}. Ana told Bo that the ferry to island ${i % 37} leaves at ${i % 12} o'clock. ${"Some more words about the trip. ".repeat(20)}`,
          }),
        });
        if (res.status !== 200) throw new Error(`add ${i}: ${res.status} ${await res.text()}`);
      }
    }),
  );
  for (;;) {
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM "${schema}".documents WHERE status = 'done'`,
    );
    if (rows[0].n >= DOCS) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  for (const s of servers) s.child.kill("SIGTERM");
  await Promise.all(servers.map((s) => new Promise((r) => s.child.once("exit", r))));
  await db.query(`DROP SCHEMA "${schema}" CASCADE`);
  await db.end();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  return DOCS / seconds;
}

console.log(`${cpus().length} CPUs, load ${loadavg()[0]!.toFixed(1)}; ${DOCS} documents, 8 adds at a time`);
const one = await run(1);
console.log(`1 replica: ${one.toFixed(1)} documents/s to done`);
const two = await run(2);
console.log(`2 replicas: ${two.toFixed(1)} documents/s to done (${(two / one).toFixed(2)}x)`);
