/**
 * What every benchmark of the suite shares: time budgets, percentiles, resident memory of a
 * process, the power-law fit, and the memctx CLI as child processes (serve over HTTP, mcp over stdio).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export const ROOT = resolve(import.meta.dirname, "../..");
export const NODE = process.execPath;
export const API_KEY = "mk_bench_suite_0123456789";

export interface SuiteOptions {
  quick: boolean;
  /** Where result files go. */
  log: (line: string) => void;
}

/** A benchmark's time budget: loops check it and stop early, keeping what they measured. */
export class Budget {
  private readonly end: number;
  stopped = false;
  /** Starts now; `now` is the clock it is read with (a test's). */
  constructor(
    readonly seconds: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.end = now() + seconds * 1000;
  }
  /** True once the budget is spent (and remembers that the benchmark was cut short). */
  spent(): boolean {
    if (this.now() >= this.end) this.stopped = true;
    return this.stopped;
  }
  leftMs(): number {
    return Math.max(0, this.end - this.now());
  }
}

export interface Percentiles {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

/** Nearest-rank percentiles of milliseconds. */
export function percentiles(ms: number[]): Percentiles {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) =>
    s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return { n: s.length, p50: at(50), p95: at(95), p99: at(99), mean };
}

/** Runs `once` on each query after `warmup` untimed calls, until the queries or the budget run out. */
export async function timeQueries(
  queries: readonly string[],
  once: (q: string) => Promise<unknown>,
  budget: Budget,
  warmup = 10,
): Promise<Percentiles> {
  for (let i = 0; i < Math.min(warmup, queries.length); i++) await once(queries[i]!);
  const ms: number[] = [];
  for (const q of queries) {
    if (ms.length >= 20 && budget.spent()) break;
    const t0 = performance.now();
    await once(q);
    ms.push(performance.now() - t0);
  }
  return percentiles(ms);
}

/** Resident memory (VmRSS) of a process in MiB, from /proc/<pid>/status; null when unreadable. */
export function rssMiB(pid: number | null | undefined): number | null {
  if (!pid) return null;
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}

/**
 * CPU time a process has used so far (user + system, all its threads) in ms, from /proc/<pid>/stat
 * (clock ticks of 10 ms); null when unreadable. On a machine shared with other jobs, wall time
 * to an answer moves 2x between runs while the CPU it took stays.
 */
export function cpuMs(pid: number | null | undefined): number | null {
  if (!pid) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/**
 * The exponent k of cost ~ n^k by least squares on the log-log points (null with fewer than two
 * usable points). k <= 1 is linear or better; about 0 is flat.
 */
export function fitExponent(points: readonly { n: number; y: number | null }[]): number | null {
  const ok = points.filter((p) => p.y !== null && p.y > 0 && p.n > 0) as { n: number; y: number }[];
  if (ok.length < 2) return null;
  const xs = ok.map((p) => Math.log(p.n));
  const ys = ok.map((p) => Math.log(p.y));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? null : num / den;
}

export const round = (x: number | null | undefined, digits = 2): number | null =>
  x === null || x === undefined || !Number.isFinite(x) ? null : Math.round(x * 10 ** digits) / 10 ** digits;

// ---------- the storage backend (--backend sqlite|postgres) ----------

/**
 * Where a benchmark's engine keeps its data: SQLite in its data directory (the default), or a
 * schema of its own in the PostgreSQL database given to `--backend postgres`, so that every
 * benchmark starts from an empty store and the database is left as it was found.
 */
export interface Storage {
  /** For openEngine: undefined on SQLite. */
  databaseUrl: string | undefined;
  /** For `memctx serve` / `memctx mcp` children on the same store. */
  env: Record<string, string>;
  /** Removes the PostgreSQL schema (nothing on SQLite: the data directory goes with rmSync). */
  drop(): Promise<void>;
}

export type BackendName = "sqlite" | "postgres";
let postgresUrl: string | null = null;
let storages = 0;

/** Chooses the backend for every benchmark of this run (a URL: PostgreSQL; null: SQLite). */
export function setBackend(databaseUrl: string | null): void {
  postgresUrl = databaseUrl;
}

export const backendName = (): BackendName => (postgresUrl ? "postgres" : "sqlite");

/** A fresh store for the benchmark `name` on the run's backend. */
export function newStorage(name: string): Storage {
  if (!postgresUrl) return { databaseUrl: undefined, env: {}, drop: async () => {} };
  const schema = `bench_${name.replace(/\W/g, "_")}_${process.pid}_${++storages}`;
  const u = new URL(postgresUrl);
  u.searchParams.set("schema", schema);
  const base = postgresUrl;
  return {
    databaseUrl: u.toString(),
    env: { MEMCTX_DATABASE_URL: u.toString() },
    drop: async () => await dropSchema(base, schema),
  };
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const { default: pg } = await import("pg");
  const u = new URL(url);
  u.searchParams.delete("schema");
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Connects once to `url` (the bench's PostgreSQL) and says why not, so a bad URL fails before any work. */
export async function checkPostgres(url: string): Promise<string | null> {
  const { default: pg } = await import("pg");
  const u = new URL(url);
  u.searchParams.delete("schema");
  const client = new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    const { rows } = await client.query("SHOW server_version");
    return rows.length > 0 ? null : "no answer";
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

// ---------- the memctx CLI as a child process ----------

const BUILD_DIR = join(ROOT, "node_modules/.cache/memctx-bench");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * `memctx` as users run it: compiled JavaScript, not tsx (whose transpiling would land in cold
 * start). Compiled from the working tree into node_modules/.cache (dist/ belongs to the build),
 * and again only when a source file changed. Falls back to tsx when the compiler fails to emit.
 */
export async function memctxCommand(log: (s: string) => void): Promise<{ args: string[]; how: string }> {
  const main = join(BUILD_DIR, "dist/cli/main.js");
  const fresh = existsSync(main) && statSync(main).mtimeMs >= newestMtime(join(ROOT, "src"));
  if (!fresh) {
    mkdirSync(BUILD_DIR, { recursive: true });
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    // src/version.ts reads ../package.json; "type": "module" makes the output ESM.
    writeFileSync(
      join(BUILD_DIR, "package.json"),
      JSON.stringify({ name: "memctx-bench-build", version: pkg.version, type: "module" }),
    );
    const t0 = performance.now();
    await promisify(execFile)(
      NODE,
      [
        join(ROOT, "node_modules/typescript/bin/tsc"),
        "-p",
        join(ROOT, "tsconfig.build.json"),
        "--outDir",
        join(BUILD_DIR, "dist"),
        "--sourceMap",
        "false",
        "--declaration",
        "false",
      ],
      { cwd: ROOT },
    ).catch(() => undefined); // type errors elsewhere in the tree still emit
    log(`compiled src/ for the child processes in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  // The package's data files, where the compiled code looks for them (../assets from dist/).
  cpSync(join(ROOT, "assets"), join(BUILD_DIR, "assets"), { recursive: true });
  if (existsSync(main)) return { args: [main], how: "compiled JavaScript (tsc of src/)" };
  return { args: ["--import", "tsx", join(ROOT, "src/cli/main.ts")], how: "tsx (compiling failed)" };
}

export interface ServeChild {
  url: string;
  pid: number;
  close(): Promise<void>;
}

/** `memctx serve` on `dataDir` as its own process (no background workers: the corpus is seeded). */
export async function startServe(
  cli: string[],
  dataDir: string,
  workers = 0,
  env: Record<string, string> = {},
): Promise<ServeChild> {
  // BENCH_NODE_ARGS: options for the server's node (a CPU profile: `--cpu-prof --cpu-prof-dir=DIR`
  // with MEMCTX_THREADS=0, so that processing runs in the profiled thread).
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(" ").filter((a) => a !== "") ?? [];
  const child = spawn(
    NODE,
    [...nodeArgs, ...cli, "serve", "--port", "0", "--data-dir", dataDir, "--workers", String(workers)],
    {
      cwd: ROOT,
      env: { ...process.env, ...env, MEMCTX_API_KEY: API_KEY },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => {
      out += d.toString();
    });
    // BENCH_SERVE_LOG=FILE: what the servers print, for a benchmark that goes wrong.
    const log = process.env.BENCH_SERVE_LOG;
    if (log)
      for (const s of [child.stdout!, child.stderr!]) s.on("data", (d: Buffer) => appendFileSync(log, d));
    child.once("exit", () => reject(new Error(`memctx serve exited: ${out}`)));
  });
  return { url, pid: child.pid!, close: async () => await stop(child) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

export interface McpChild {
  client: Client;
  pid: number | null;
  /** Spawn to the end of `initialize`. */
  connectMs: number;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** An MCP server over stdio as an MCP client starts it, with the SDK's own client. */
export async function startMcp(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<McpChild> {
  const t0 = performance.now();
  const transport = new StdioClientTransport({
    command,
    args,
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "ignore",
    cwd: ROOT,
  });
  const client = new Client({ name: "memctx-bench", version: "1" });
  await client.connect(transport);
  const connectMs = performance.now() - t0;
  return {
    client,
    pid: transport.pid,
    connectMs,
    async call(name, a) {
      const r = (await client.callTool({ name, arguments: a })) as CallToolResult;
      if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
      return r;
    },
    close: () => client.close(),
  };
}

/** `memctx mcp` over stdio on the embedded engine in `dataDir`, bound to `namespace`. */
export async function startMemctxMcp(
  cli: string[],
  dataDir: string,
  namespace: string,
  env: Record<string, string> = {},
): Promise<McpChild> {
  return await startMcp(NODE, [...cli, "mcp", "--namespace", namespace], {
    ...env,
    HOME: dataDir,
    MEMCTX_DATA_DIR: dataDir,
  });
}

/** Hit texts of a memctx MCP `search` result, in rank order. */
export function memctxMcpTexts(r: CallToolResult): string[] {
  const s = r.structuredContent as { results?: { text: string }[] } | undefined;
  return (s?.results ?? []).map((x) => x.text);
}
