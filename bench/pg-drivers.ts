/**
 * node-postgres (`pg`, memctx's driver) against postgres.js (`postgres`) on memctx's PostgreSQL hot
 * path (issue 25: choose the driver by measuring both), on one database, same pool size, same
 * concurrency, the same SQL texts as prepared statements:
 *   npx tsx bench/pg-drivers.ts --postgres-js /tmp/pgjs/node_modules/postgres
 *     [--database-url postgres://memctx_ci:memctx_ci@127.0.0.1:5432/memctx_drivers]
 *     [--rounds 4] [--seconds 2.5] [--pool 8] [--workers 8] [--chunks 40] [--terms 10]
 *
 * postgres.js is not a dependency of memctx and must not become one: install it outside the repo
 * (`mkdir -p /tmp/pgjs && cd /tmp/pgjs && npm init -y && npm i postgres`) and give its package
 * directory with `--postgres-js` or MEMCTX_BENCH_POSTGRES_JS; without it the script stops at once.
 * The URL: `--database-url`, else MEMCTX_BENCH_DATABASE_URL, else the default above (the role must
 * be able to create a schema there: owning the database does). Tables live in a schema of their
 * own, `bench_drivers_<pid>`, dropped at the end.
 *
 * Measured, drivers alternated in each round (A B, then B A, ...) so that the machine's other work
 * falls on both; the table gives each figure's median over the rounds, and its range:
 * (a) ingest: one transaction per document as memctx's documentTransaction does it: BEGIN; INSERT
 *     the document (RETURNING rowid); SELECT it FOR UPDATE; INSERT its chunks in one statement from
 *     one JSON text parameter (jsonb_array_elements(CAST($1 AS jsonb)), as store/documents.ts
 *     insertChunksAtOnce is translated) RETURNING rowid, position; UPDATE its status; INSERT its job;
 *     COMMIT. `--workers` documents at a time: docs/s.
 * (b) search: the postings read of store/search-index.ts postingRows (a JSON array of `--terms`
 *     stems joined to the postings' primary key (JOIN ... ON, as translate.ts writes it), rows as arrays), `--workers` at a time: p50 / p95
 *     and reads/s.
 * (c) `SELECT 1`, one at a time: the round trip's p50.
 * Each phase also gives the client's CPU time per operation (process.cpuUsage): on a shared 2-core
 * machine the driver's CPU is taken from PostgreSQL's.
 * Then, once per driver, what memctx needs of it: statement_timeout (error class and SQLSTATE), a
 * pool-acquire timeout, recovery after its connections are terminated by the server (as on a
 * restart, without restarting the shared cluster: pg_terminate_backend of the bench's own
 * connections), how fast a query fails while nothing listens on the port; and, in child processes,
 * the time to load each driver (pg: require, as connect.ts does; postgres.js: import and require),
 * the packages each brings and their size on disk.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type pg from "pg";
import { percentiles, ROOT } from "./suite/common.js";

const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    "postgres-js": { type: "string" },
    rounds: { type: "string", default: "4" },
    seconds: { type: "string", default: "2.5" },
    pool: { type: "string", default: "8" },
    workers: { type: "string", default: "8" },
    chunks: { type: "string", default: "40" },
    terms: { type: "string", default: "10" },
  },
});
const databaseUrl =
  values["database-url"] ??
  process.env.MEMCTX_BENCH_DATABASE_URL ??
  "postgres://memctx_ci:memctx_ci@127.0.0.1:5432/memctx_drivers";
const pgjsDir = values["postgres-js"] ?? process.env.MEMCTX_BENCH_POSTGRES_JS;
if (!pgjsDir || !existsSync(join(pgjsDir, "package.json"))) {
  process.stderr.write(
    `postgres.js not found${pgjsDir ? ` at ${pgjsDir}` : ""}: it is not a dependency of memctx. Install it outside the repo\n` +
      "  mkdir -p /tmp/pgjs && cd /tmp/pgjs && npm init -y && npm i postgres\n" +
      "and run with --postgres-js /tmp/pgjs/node_modules/postgres (or MEMCTX_BENCH_POSTGRES_JS).\n",
  );
  process.exit(2);
}
const ROUNDS = Number(values.rounds);
const PHASE_MS = Number(values.seconds) * 1000;
const POOL = Number(values.pool);
const WORKERS = Number(values.workers);
const CHUNKS = Number(values.chunks);
const TERMS = Number(values.terms);
const STATEMENT_TIMEOUT_MS = 10_000;
const SCHEMA = `bench_drivers_${process.pid}`;
/** The search corpus: units, stems per unit, vocabulary (stems drawn skewed, as words are). */
const UNITS = 10_000;
const STEMS_PER_UNIT = 12;
const VOCABULARY = 3_000;

const log = (s: string) => process.stdout.write(`${s}\n`);
const pgjsPackage = JSON.parse(readFileSync(join(pgjsDir, "package.json"), "utf8")) as {
  version: string;
  module: string;
  main: string;
};
const pgjsEsm = resolve(pgjsDir, pgjsPackage.module);
const pgjsCjs = resolve(pgjsDir, pgjsPackage.main);

// ---- The two drivers behind one small surface ------------------------------------------------

/** What the bench needs of postgres.js (its types are not in this project: it is not a dependency). */
interface PgjsError extends Error {
  code?: string;
}
type PgjsRows = Record<string, unknown>[];
interface PgjsQuery extends Promise<PgjsRows> {
  values(): Promise<unknown[][]>;
}
interface PgjsSql {
  (strings: TemplateStringsArray, ...args: unknown[]): PgjsQuery;
  unsafe(text: string, params?: unknown[], options?: { prepare?: boolean }): PgjsQuery;
  begin<T>(fn: (tx: PgjsSql) => Promise<T>): Promise<T>;
  reserve(): Promise<PgjsSql & { release(): void }>;
  end(options?: { timeout?: number }): Promise<void>;
}
interface PgjsModule {
  (url: string, options: Record<string, unknown>): PgjsSql;
  PostgresError: new (...args: never[]) => PgjsError;
}

/** One driver's pool, as the benchmark uses it. */
interface Driver {
  name: string;
  /** One statement outside a transaction (prepared, named by its text). */
  query(text: string, params: unknown[], arrays?: boolean): Promise<unknown[]>;
  /** A transaction on one connection: `q` runs its statements. */
  transaction<T>(fn: (q: (text: string, params: unknown[]) => Promise<unknown[]>) => Promise<T>): Promise<T>;
  selectOne(): Promise<unknown>;
  /**
   * A JSON parameter (the `CAST($n AS jsonb)` ones): pg sends text, so memctx passes
   * JSON.stringify(x); postgres.js learns from the prepared statement that $n is jsonb and
   * serializes the value itself (a string would be sent as a JSON string, a scalar).
   */
  json(x: unknown): unknown;
  close(): Promise<void>;
}

const requireHere = createRequire(import.meta.url);
const pgModule = requireHere("pg") as typeof pg;
const pgVersion = (
  JSON.parse(readFileSync(join(ROOT, "node_modules/pg/package.json"), "utf8")) as { version: string }
).version;
const pgjs = ((await import(pathToFileURL(pgjsEsm).href)) as { default: PgjsModule }).default;

/** int8 as a number, as memctx's connect.ts reads it. */
const pgTypes = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20) return (v: string) => Number(v);
    // biome-ignore lint/suspicious/noExplicitAny: node-postgres's own overloads
    return (pgModule.types.getTypeParser as any)(oid, format);
  },
};
const pgjsTypes = {
  int8: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
};

/** Statement names by text, as memctx's connect.ts names them (one name per distinct text). */
const names = new Map<string, string>();
const nameOf = (text: string) => {
  let n = names.get(text);
  if (!n) {
    n = `b${names.size}`;
    names.set(text, n);
  }
  return n;
};

function pgPoolConfig(url: string, extra: pg.PoolConfig = {}): pg.PoolConfig {
  return {
    connectionString: url,
    application_name: "bench-pg",
    types: pgTypes,
    max: POOL,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    lock_timeout: STATEMENT_TIMEOUT_MS,
    options: `-c search_path=${SCHEMA}`,
    ...extra,
  };
}

function pgDriver(url: string, extra: pg.PoolConfig = {}): Driver & { pool: pg.Pool } {
  const pool = new pgModule.Pool(pgPoolConfig(url, extra));
  // An idle connection the server ends emits here; unheard, it would end the process.
  pool.on("error", () => {});
  const run = (on: pg.Pool | pg.PoolClient, text: string, params: unknown[], arrays = false) =>
    on
      .query({ name: nameOf(text), text, values: params, ...(arrays ? { rowMode: "array" as const } : {}) })
      .then((r) => r.rows as unknown[]);
  return {
    name: `pg ${pgVersion}`,
    pool,
    query: (text, params, arrays) => run(pool, text, params, arrays),
    async transaction(fn) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query("BEGIN");
        const out = await fn((text, params) => run(client, text, params));
        await client.query("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch((e: Error) => {
          broken = e;
        });
        throw err;
      } finally {
        client.release(broken);
      }
    },
    selectOne: () => pool.query({ name: "one", text: "SELECT 1" }),
    json: (x) => JSON.stringify(x),
    close: () => pool.end(),
  };
}

function pgjsOptions(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    max: POOL,
    idle_timeout: 30,
    connect_timeout: 5,
    prepare: true,
    onnotice: () => {},
    types: pgjsTypes,
    connection: {
      application_name: "bench-pgjs",
      statement_timeout: STATEMENT_TIMEOUT_MS,
      lock_timeout: STATEMENT_TIMEOUT_MS,
      search_path: SCHEMA,
    },
    ...extra,
  };
}

function pgjsDriver(url: string, extra: Record<string, unknown> = {}): Driver & { sql: PgjsSql } {
  const sql = pgjs(url, pgjsOptions(extra));
  // The same SQL texts as pg's, prepared: sql.unsafe prepares only when asked (tagged templates
  // always do); memctx's statements are texts, so this is how it would call postgres.js.
  const run = (on: PgjsSql, text: string, params: unknown[], arrays = false): Promise<unknown[]> => {
    const q = on.unsafe(text, params, { prepare: true });
    return arrays ? q.values() : q;
  };
  return {
    name: `postgres.js ${pgjsPackage.version}`,
    sql,
    query: (text, params, arrays) => run(sql, text, params, arrays),
    transaction: (fn) => sql.begin((tx) => fn((text, params) => run(tx, text, params))),
    selectOne: () => sql`SELECT 1`,
    json: (x) => x,
    close: () => sql.end({ timeout: 5 }),
  };
}

// ---- The workload --------------------------------------------------------------------------------

const SETUP = `
  CREATE SCHEMA ${SCHEMA};
  SET search_path TO ${SCHEMA};
  CREATE TABLE documents (
    rowid        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    namespace_id TEXT NOT NULL,
    content      TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    metadata     TEXT NOT NULL DEFAULT '{}',
    status       TEXT NOT NULL,
    generation   INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
  );
  CREATE INDEX documents_namespace_created ON documents(namespace_id, created_at);
  CREATE TABLE chunks (
    rowid        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    document_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    namespace_id TEXT NOT NULL,
    position     INTEGER NOT NULL,
    content      TEXT NOT NULL,
    type         TEXT NOT NULL DEFAULT 'text',
    start_offset INTEGER NOT NULL,
    end_offset   INTEGER NOT NULL,
    speaker      TEXT,
    context      TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL
  );
  CREATE INDEX chunks_document ON chunks(document_id, position);
  CREATE TABLE jobs (
    id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    kind        TEXT NOT NULL,
    document_id TEXT NOT NULL,
    state       TEXT NOT NULL,
    created_at  TEXT NOT NULL
  );
  CREATE INDEX jobs_ready ON jobs(state, id);
  CREATE TABLE search_postings (
    space      BIGINT NOT NULL,
    term       TEXT NOT NULL,
    unit       BIGINT NOT NULL,
    tf         INTEGER NOT NULL,
    tf_context INTEGER NOT NULL,
    length     INTEGER NOT NULL,
    PRIMARY KEY (space, term, unit)
  );
  INSERT INTO search_postings (space, term, unit, tf, tf_context, length)
    SELECT 1, 's' || floor(${VOCABULARY} * power(random(), 2))::int, u, 1 + floor(3 * random())::int, 0, 20 + u % 30
    FROM generate_series(1, ${UNITS}) u, generate_series(1, ${STEMS_PER_UNIT})
    ON CONFLICT DO NOTHING;
  ANALYZE;`;

const INSERT_DOCUMENT = `INSERT INTO documents (id, namespace_id, content, content_hash, status, created_at, updated_at)
  VALUES ($1, $2, $3, $4, 'queued', $5, $5) RETURNING rowid`;
const LOCK_DOCUMENT = "SELECT rowid, generation, status FROM documents WHERE id = $1 FOR UPDATE";
const INSERT_CHUNKS = `INSERT INTO chunks (id, document_id, namespace_id, position, content, type, start_offset,
    end_offset, speaker, context, created_at)
  SELECT j.value ->> 0, $2, $3, CAST(j.value ->> 1 AS BIGINT), j.value ->> 2, 'text', CAST(j.value ->> 3 AS BIGINT),
    CAST(j.value ->> 4 AS BIGINT), j.value ->> 5, j.value ->> 6, $4
  FROM jsonb_array_elements(CAST($1 AS jsonb)) AS j(value)
  RETURNING rowid, position`;
const DOCUMENT_DONE = "UPDATE documents SET status = 'done', updated_at = $2 WHERE id = $1";
const INSERT_JOB =
  "INSERT INTO jobs (kind, document_id, state, created_at) VALUES ('dream', $1, 'queued', $2)";
const POSTINGS = `SELECT p.unit, p.term, p.tf, p.tf_context, p.length
  FROM jsonb_array_elements_text(CAST($1 AS jsonb)) AS j(value)
  JOIN search_postings p ON p.space = $2 AND p.term = j.value`;

const WORDS =
  "the kiln reached twelve hundred degrees before the glaze turned glassy and Maria wrote down every step of the firing schedule for next week".split(
    " ",
  );
let docSeq = 0;
/** A document of CHUNKS chunks of ~200 characters, in insertChunksAtOnce's row shape. */
function newDocument(driver: string): { id: string; content: string; chunks: unknown[]; hash: string } {
  const id = `doc_${driver}_${process.pid}_${docSeq++}`;
  const parts: string[] = [];
  const rows: unknown[] = [];
  let at = 0;
  for (let i = 0; i < CHUNKS; i++) {
    const words: string[] = [];
    for (let w = 0; w < 34; w++) words.push(WORDS[(i * 7 + w * 3 + docSeq) % WORDS.length]!);
    const text = `${words.join(" ")}.`;
    rows.push([`chk_${id}_${i}`, i, text, at, at + text.length, i % 2 ? "maria" : null, ""]);
    parts.push(text);
    at += text.length + 1;
  }
  return { id, content: parts.join(" "), chunks: rows, hash: `h${docSeq}` };
}

async function ingestOne(d: Driver, tag: string): Promise<void> {
  const doc = newDocument(tag);
  const t = new Date().toISOString();
  await d.transaction(async (q) => {
    await q(INSERT_DOCUMENT, [doc.id, "ns_bench", doc.content, doc.hash, t]);
    await q(LOCK_DOCUMENT, [doc.id]);
    const rows = await q(INSERT_CHUNKS, [d.json(doc.chunks), doc.id, "ns_bench", t]);
    if (rows.length !== CHUNKS) throw new Error(`${rows.length} chunks inserted, not ${CHUNKS}`);
    await q(DOCUMENT_DONE, [doc.id, t]);
    await q(INSERT_JOB, [doc.id, t]);
  });
}

let searchSeq = 1;
/** TERMS distinct stems drawn as the corpus's are (skewed towards the frequent ones), deterministic. */
function queryStems(): string[] {
  const out = new Set<string>();
  while (out.size < TERMS) {
    searchSeq = (searchSeq * 48271) % 2147483647;
    const r = searchSeq / 2147483647;
    out.add(`s${Math.floor(VOCABULARY * r * r)}`);
  }
  return [...out];
}

interface Phase {
  ops: number;
  seconds: number;
  ms: number[];
  cpuMsPerOp: number;
  rows: number;
}

/** `workers` loops doing `op` for PHASE_MS (or `count` ops when given), one latency per op. */
async function phase(workers: number, op: () => Promise<number>, ms = PHASE_MS): Promise<Phase> {
  const lat: number[] = [];
  let rows = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        rows += await op();
        lat.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return {
    ops: lat.length,
    seconds,
    ms: lat,
    cpuMsPerOp: (used.user + used.system) / 1000 / (lat.length || 1),
    rows,
  };
}

interface RoundResult {
  ingestDocsPerS: number;
  ingestP50: number;
  ingestCpu: number;
  searchP50: number;
  searchP95: number;
  searchPerS: number;
  searchCpu: number;
  searchRows: number;
  oneP50: number;
  oneCpu: number;
}

async function round(d: Driver, tag: string): Promise<RoundResult> {
  const ingest = await phase(WORKERS, async () => {
    await ingestOne(d, tag);
    return 1;
  });
  searchSeq = 1; // each driver reads the same stems in the same order
  const search = await phase(
    WORKERS,
    async () => (await d.query(POSTINGS, [d.json(queryStems()), 1], true)).length,
  );
  const one = await phase(
    1,
    async () => {
      await d.selectOne();
      return 1;
    },
    PHASE_MS / 2,
  );
  const s = percentiles(search.ms);
  return {
    ingestDocsPerS: ingest.ops / ingest.seconds,
    ingestP50: percentiles(ingest.ms).p50,
    ingestCpu: ingest.cpuMsPerOp,
    searchP50: s.p50,
    searchP95: s.p95,
    searchPerS: search.ops / search.seconds,
    searchCpu: search.cpuMsPerOp,
    searchRows: search.rows / (search.ops || 1),
    oneP50: percentiles(one.ms).p50,
    oneCpu: one.cpuMsPerOp,
  };
}

// ---- What memctx needs of a driver, beyond speed ------------------------------------------------

const ms = (t: number) => `${Math.round(performance.now() - t)} ms`;
const describe = (err: unknown, typed: (e: unknown) => boolean) => {
  const e = err as { code?: string; message?: string; constructor?: { name?: string } };
  return `${e?.constructor?.name ?? "?"}${typed(err) ? " (typed)" : ""} code=${e?.code ?? "-"} "${String(e?.message ?? err).slice(0, 70)}"`;
};
/** A promise's outcome within `limit` ms: its error, "ok", or that it is still waiting. */
async function within(p: Promise<unknown>, limit: number, typed: (e: unknown) => boolean): Promise<string> {
  const t = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<string>((r) => {
    timer = setTimeout(() => r(`still waiting after ${limit} ms`), limit);
  });
  const out = await Promise.race([
    p.then(
      () => `ok after ${ms(t)}`,
      (err) => `${describe(err, typed)} after ${ms(t)}`,
    ),
    waited,
  ]);
  clearTimeout(timer);
  return out;
}

/** A port on 127.0.0.1 that nothing listens on (a server that is down). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function behaviour(admin: pg.Client): Promise<string[]> {
  const out: string[] = [];
  const pgTyped = (e: unknown) => e instanceof pgModule.DatabaseError;
  const pgjsTyped = (e: unknown) => e instanceof pgjs.PostgresError;
  const terminate = (app: string) =>
    admin.query(
      "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
      [app],
    );

  // statement_timeout: a statement that runs past it.
  {
    const a = pgDriver(databaseUrl, { statement_timeout: 300 });
    const b = pgjsDriver(databaseUrl, {
      connection: { application_name: "bench-pgjs", statement_timeout: 300, search_path: SCHEMA },
    });
    out.push(
      `statement_timeout 300 ms, SELECT pg_sleep(2): pg ${await within(a.query("SELECT pg_sleep(2)", []), 3000, pgTyped)}; postgres.js ${await within(b.query("SELECT pg_sleep(2)", []), 3000, pgjsTyped)}`,
    );
    await a.close();
    await b.close();
  }
  // Pool-acquire timeout: a pool of 1 whose connection is held by a transaction.
  {
    const a = pgDriver(databaseUrl, { max: 1, connectionTimeoutMillis: 300 });
    const held = await a.pool.connect();
    const pgWait = await within(a.query("SELECT 1", []), 2000, pgTyped);
    held.release();
    const b = pgjsDriver(databaseUrl, { max: 1 });
    const reserved = await b.sql.reserve();
    const waiting = b.query("SELECT 1", []);
    const pgjsWait = await within(waiting, 2000, pgjsTyped);
    reserved.release();
    await waiting;
    out.push(
      `acquire, pool of 1 held (pg connectionTimeoutMillis 300; postgres.js has no such option): pg ${pgWait}; postgres.js ${pgjsWait}`,
    );
    await a.close();
    await b.close();
  }
  // One slow statement (a lock wait, say) on one of a pool's 2 connections: do short statements
  // sent meanwhile wait for it? (postgres.js pipelines a query onto a busy connection when none is
  // free; pg queues it until a connection is free.)
  const SHORT = "SELECT pg_sleep(CAST($1 AS float8))";
  for (const d of [pgDriver(databaseUrl, { max: 2 }), pgjsDriver(databaseUrl, { max: 2 })] as Driver[]) {
    // Both connections open, the short statement prepared on both (as memctx's are).
    for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: 4 }, () => d.query(SHORT, [0.01])));
    const slow = d.query("SELECT pg_sleep(1.5)", []).catch(() => []);
    await new Promise((r) => setTimeout(r, 100));
    const lat = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const t = performance.now();
        await d.query(SHORT, [0.01]);
        return performance.now() - t;
      }),
    );
    await slow;
    out.push(
      `${d.name}, pool of 2, one connection in a 1.5 s statement, 20 prepared statements of 10 ms sent at once: ${lat.filter((x) => x > 1000).length} of 20 waited > 1 s, max ${Math.round(Math.max(...lat))} ms, median ${Math.round(median(lat))} ms`,
    );
    await d.close();
  }
  // The server ends the pool's connections (as a restart does): a statement in flight, then the
  // next ones, sent at once and after 0.5 s (pg_terminate_backend returns before the backends exit).
  for (const make of [
    () => ({ d: pgDriver(databaseUrl) as Driver, app: "bench-pg", typed: pgTyped }),
    () => ({ d: pgjsDriver(databaseUrl) as Driver, app: "bench-pgjs", typed: pgjsTyped }),
  ]) {
    const { d, app, typed } = make();
    const parts: string[] = [];
    for (const wait of [0, 500]) {
      // Every connection open first (after the first pass: statements that meet ended connections fail).
      const filled = await Promise.allSettled(
        Array.from({ length: POOL }, () => d.query("SELECT pg_sleep(0.05)", [])),
      );
      const failed = filled.filter((r) => r.status === "rejected").length;
      // Its outcome is awaited from the start: a rejection unheard while terminate() runs would end the process.
      const inFlight = within(d.query("SELECT pg_sleep(1)", []), 4000, typed);
      await new Promise((r) => setTimeout(r, 200));
      const killed = (await terminate(app)).rows[0] as { n: string };
      const first = await inFlight;
      await new Promise((r) => setTimeout(r, wait));
      const next: string[] = [];
      for (let i = 0; i < 3; i++)
        next.push((await within(d.query("SELECT 1", []), 3000, typed)).replace(/ ".*"/, ""));
      const tx = await within(
        d.transaction((q) => q("SELECT 1", [])),
        3000,
        typed,
      );
      parts.push(
        `${failed ? `(${failed} of ${POOL} statements filling the pool failed) ` : ""}${killed.n} terminated; in flight: ${first}; ${wait} ms later 3 statements: ${next.join(" | ")}; a transaction: ${tx}`,
      );
    }
    out.push(`${d.name}, connections ended by the server: ${parts.join(" // ")}`);
    await d.close();
  }
  // Nothing listening (PostgreSQL down): how fast a statement fails.
  {
    const u = new URL(databaseUrl);
    u.port = String(await closedPort());
    const a = pgDriver(u.toString());
    const b = pgjsDriver(u.toString());
    out.push(
      `server down (connection refused): pg ${await within(a.query("SELECT 1", []), 8000, pgTyped)}; postgres.js ${await within(b.query("SELECT 1", []), 8000, pgjsTyped)}`,
    );
    await a.close().catch(() => {});
    await b.close().catch(() => {});
  }
  return out;
}

/** Milliseconds to load each driver in a fresh node (median of `runs`, alternated). */
function loadTimes(runs: number): Record<string, number[]> {
  const probes: Record<string, string> = {
    "pg: require (as connect.ts)": `const t=performance.now();require(${JSON.stringify(requireHere.resolve("pg"))});console.log(performance.now()-t)`,
    "postgres.js: import (ESM)": `const t=performance.now();import(${JSON.stringify(pathToFileURL(pgjsEsm).href)}).then(()=>console.log(performance.now()-t))`,
    "postgres.js: require (CJS build)": `const t=performance.now();require(${JSON.stringify(pgjsCjs)});console.log(performance.now()-t)`,
  };
  const out: Record<string, number[]> = Object.fromEntries(Object.keys(probes).map((k) => [k, []]));
  for (let i = 0; i < runs; i++)
    for (const [k, code] of Object.entries(probes))
      out[k]!.push(Number(execFileSync(process.execPath, ["-e", code], { encoding: "utf8" }).trim()));
  return out;
}

/** A package and what it depends on (dependencies and optional ones present), resolved from `from`. */
function closure(name: string, from: string): { packages: string[]; bytes: number } {
  const seen = new Map<string, string>();
  const visit = (n: string, base: string) => {
    if (seen.has(n)) return;
    // Node's lookup: node_modules/<n> here or in a folder above (exports may hide package.json).
    let dir: string | undefined;
    for (let at = base; ; at = resolve(at, "..")) {
      if (existsSync(join(at, "node_modules", n, "package.json"))) {
        dir = join(at, "node_modules", n);
        break;
      }
      if (at === resolve(at, "..")) return; // an optional dependency not installed
    }
    seen.set(n, dir);
    const p = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<
      string,
      Record<string, string>
    >;
    for (const dep of Object.keys({ ...p.dependencies, ...p.optionalDependencies })) visit(dep, dir);
  };
  visit(name, from);
  const size = (path: string): number => {
    const s = statSync(path);
    if (!s.isDirectory()) return s.size;
    return readdirSync(path)
      .filter((e) => e !== "node_modules")
      .reduce((a, e) => a + size(join(path, e)), 0);
  };
  return {
    packages: [...seen.keys()],
    bytes: [...seen.values()].reduce((a, d) => a + size(d), 0),
  };
}

// ---- Run -----------------------------------------------------------------------------------------

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmt = (xs: number[], digits: number) =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;

const admin = new pgModule.Client({ connectionString: databaseUrl, application_name: "bench-admin" });
try {
  await admin.connect();
} catch (err) {
  process.stderr.write(`cannot connect to ${databaseUrl}: ${(err as Error).message}\n`);
  process.exit(2);
}
const started = new Date();
try {
  const server = (await admin.query("SHOW server_version")).rows[0] as { server_version: string };
  const t0 = performance.now();
  await admin.query(SETUP);
  const postings = (await admin.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.search_postings`))
    .rows[0] as {
    n: number;
  };
  log(
    `PostgreSQL ${server.server_version}, node ${process.version}; schema ${SCHEMA}: ${postings.n} postings seeded in ${ms(t0)}`,
  );
  log(
    `pool ${POOL}, ${WORKERS} workers, ${ROUNDS} rounds of ${PHASE_MS / 1000} s per phase (SELECT 1: half), ${CHUNKS} chunks per document, ${TERMS} stems per search`,
  );

  const drivers = [pgDriver(databaseUrl), pgjsDriver(databaseUrl)];
  // Warm: every connection open and every statement prepared on it.
  for (const d of drivers) {
    await Promise.all(
      Array.from({ length: POOL * 2 }, async (_, i) => {
        await ingestOne(d, `warm${i}`);
        await d.query(POSTINGS, [d.json(queryStems()), 1], true);
        await d.selectOne();
      }),
    );
  }
  // Both prepare: each driver's connections hold named statements.
  const prepared: string[] = [];
  {
    const c = await (drivers[0] as ReturnType<typeof pgDriver>).pool.connect();
    prepared.push(
      `pg ${((await c.query("SELECT count(*)::int AS n FROM pg_prepared_statements")).rows[0] as { n: number }).n}`,
    );
    c.release();
    const r = await (drivers[1] as ReturnType<typeof pgjsDriver>).sql.reserve();
    prepared.push(
      `postgres.js ${((await r`SELECT count(*)::int AS n FROM pg_prepared_statements`)[0] as { n: number }).n}`,
    );
    r.release();
  }
  log(`prepared statements on one connection after the warm-up: ${prepared.join(", ")}`);

  const results = new Map<string, RoundResult[]>(drivers.map((d) => [d.name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...drivers].reverse() : drivers;
    for (const d of order) {
      const res = await round(d, `r${r}${d === drivers[0] ? "a" : "b"}`);
      results.get(d.name)!.push(res);
      log(
        `round ${r + 1} ${d.name}: ingest ${res.ingestDocsPerS.toFixed(1)} docs/s; search p50 ${res.searchP50.toFixed(2)} ms p95 ${res.searchP95.toFixed(2)} ms ${res.searchPerS.toFixed(0)}/s (${res.searchRows.toFixed(0)} rows); SELECT 1 p50 ${(res.oneP50 * 1000).toFixed(0)} µs`,
      );
    }
  }
  for (const d of drivers) await d.close();

  const rows: [string, (r: RoundResult) => number, number][] = [
    ["ingest, docs/s (8 at a time)", (r) => r.ingestDocsPerS, 1],
    ["ingest transaction p50, ms", (r) => r.ingestP50, 2],
    ["client CPU per document, ms", (r) => r.ingestCpu, 3],
    ["search p50, ms", (r) => r.searchP50, 2],
    ["search p95, ms", (r) => r.searchP95, 2],
    ["search reads/s (8 at a time)", (r) => r.searchPerS, 0],
    ["client CPU per search, ms", (r) => r.searchCpu, 3],
    ["SELECT 1 p50, µs (one at a time)", (r) => r.oneP50 * 1000, 0],
    ["client CPU per SELECT 1, µs", (r) => r.oneCpu * 1000, 0],
  ];
  const [a, b] = drivers.map((d) => results.get(d.name)!) as [RoundResult[], RoundResult[]];
  log("");
  log(
    `| median (min-max) of ${ROUNDS} rounds | ${drivers[0]!.name} | ${drivers[1]!.name} | postgres.js / pg |`,
  );
  log("| --- | --- | --- | --- |");
  for (const [label, get, digits] of rows) {
    const x = a.map(get);
    const y = b.map(get);
    log(`| ${label} | ${fmt(x, digits)} | ${fmt(y, digits)} | ${(median(y) / median(x)).toFixed(2)}x |`);
  }
  log(`(search rows per read: ${median(a.map((r) => r.searchRows)).toFixed(0)})`);

  log("");
  for (const line of await behaviour(admin)) log(`- ${line}`);

  const loads = loadTimes(9);
  log("");
  for (const [k, v] of Object.entries(loads)) log(`- load, ${k}: median ${fmt(v, 1)} ms of ${v.length}`);
  const pgDeps = closure("pg", ROOT);
  const pgjsDeps = closure("postgres", resolve(pgjsDir, "../.."));
  log(
    `- install: pg ${pgDeps.packages.length} packages, ${(pgDeps.bytes / 1024).toFixed(0)} KiB (${pgDeps.packages.join(", ")}); postgres.js ${pgjsDeps.packages.length} package, ${(pgjsDeps.bytes / 1024).toFixed(0)} KiB`,
  );
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => {});
  await admin.end();
  log(`(${((Date.now() - started.getTime()) / 1000).toFixed(0)} s)`);
}
