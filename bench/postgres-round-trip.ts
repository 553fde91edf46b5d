/**
 * The cost of one statement through the PostgreSQL backend's synchronous bridge (store/postgres/
 * connect.ts): the calling thread posts to the connection's worker and blocks until it answers.
 * Compared with the same statement through node-postgres directly (async, no thread hop) and
 * with SQLite. Run: MEMCTX_BENCH_DATABASE_URL=postgres://... node --import tsx bench/postgres-round-trip.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { openDatabase } from "../src/engine/store/db.js";

const url = process.env.MEMCTX_BENCH_DATABASE_URL ?? "postgres://memctx:memctx@127.0.0.1:5432/memctx_test";
const N = 5_000;
const dir = mkdtempSync(join(tmpdir(), "memctx-rt-"));
const time = (label: string, f: () => void) => {
  for (let i = 0; i < 500; i++) f();
  const t = performance.now();
  for (let i = 0; i < N; i++) f();
  console.log(`${label}: ${(((performance.now() - t) * 1000) / N).toFixed(1)} µs per statement`);
};

const u = new URL(url);
u.searchParams.set("schema", `bench_rt_${process.pid}`);
const db = await openDatabase(dir, { databaseUrl: u.toString() });
const point = db.prepare("SELECT id, name FROM organizations WHERE id = ?");
time("bridge, point SELECT (no row)", async () => await point.get("org_x"));
const one = db.prepare("SELECT ?1 AS a");
time("bridge, SELECT ?", async () => await one.get(1));
db.close();

const client = new pg.Client({ connectionString: url });
await client.connect();
const t = performance.now();
for (let i = 0; i < N; i++) await client.query({ name: "a", text: "SELECT $1::int AS a", values: [i] });
console.log(
  `node-postgres direct (async), SELECT $1: ${(((performance.now() - t) * 1000) / N).toFixed(1)} µs per statement`,
);
await client.query(`DROP SCHEMA bench_rt_${process.pid} CASCADE`);
await client.end();

const lite = await openDatabase(join(dir, "lite"));
const litePoint = lite.prepare("SELECT id, name FROM organizations WHERE id = ?");
time("SQLite, point SELECT (no row)", () => litePoint.get("org_x"));
lite.close();
rmSync(dir, { recursive: true, force: true });
