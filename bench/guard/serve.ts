/**
 * The probes' shared parts: a `memctx serve` child of this checkout's dist/ (run `npm run build`
 * first), requests that time themselves, a /health poller and the resident memory of PostgreSQL's
 * backends (read from /proc: the probes run on the database's machine).
 */
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
export const API_KEY = "mk_guard_probe_0123456789";
const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" };

export interface Serve {
  url: string;
  pid: number;
  /** Whether the child is still running. */
  alive(): boolean;
  /** What it printed (stdout and stderr). */
  output(): string;
  close(): Promise<void>;
}

export async function startServe(dataDir: string, env: Record<string, string> = {}): Promise<Serve> {
  const child = spawn(
    process.execPath,
    [
      process.env.GUARD_CLI ?? join(ROOT, "dist/cli/main.js"),
      "serve",
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--workers",
      "1",
    ],
    {
      cwd: ROOT,
      env: { ...process.env, ...env, MEMCTX_API_KEY: API_KEY },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on("data", (d: Buffer) => {
      out += d.toString();
    });
    // GUARD_SERVE_LOG=FILE: everything the server prints, for a probe that goes wrong.
    const file = process.env.GUARD_SERVE_LOG;
    if (file)
      for (const s of [child.stdout!, child.stderr!]) s.on("data", (d: Buffer) => appendFileSync(file, d));
    child.once("exit", () => reject(new Error(`memctx serve exited: ${out}`)));
  });
  return {
    url,
    pid: child.pid!,
    alive: () => !exited,
    output: () => out,
    async close() {
      if (exited) return;
      const done = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 5000);
      await done;
      clearTimeout(t);
    },
  };
}

/** One request: status (0: no answer), time and body text, cut off at `timeoutMs`. */
export async function timed(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 60_000,
): Promise<{ status: number; ms: number; text: string }> {
  const t = performance.now();
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, ms: Math.round(performance.now() - t), text };
  } catch (err) {
    return { status: 0, ms: Math.round(performance.now() - t), text: String(err) };
  }
}

/** Polls /health every `everyMs` until stopped: the longest answer and how many failed. */
export function pollHealth(base: string, everyMs = 100) {
  let stop = false;
  let max = 0;
  let failed = 0;
  let n = 0;
  const done = (async () => {
    while (!stop) {
      const r = await timed(base, "GET", "/health", undefined, 30_000);
      n++;
      max = Math.max(max, r.ms);
      if (r.status !== 200) failed++;
      await new Promise((res) => setTimeout(res, everyMs));
    }
  })();
  return {
    async stop() {
      stop = true;
      await done;
      return { maxMs: max, failed, probes: n };
    },
  };
}

/** Waits until every document of `ns` is done or failed (at most `ms`). */
export async function waitProcessed(base: string, ns: string, ms = 300_000): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await timed(base, "POST", `/ns/${ns}/list/documents?limit=100`, {});
    const docs = (JSON.parse(r.text) as { documents?: { system: { status: string } }[] }).documents ?? [];
    const open = docs.filter((d) => d.system.status !== "done" && d.system.status !== "failed");
    if (open.length === 0) return docs.map((d) => d.system.status).join(",");
    if (Date.now() > end) return `still open: ${open.length}`;
    await new Promise((res) => setTimeout(res, 300));
  }
}

/** Resident memory (MiB) of a process, 0 when gone. */
export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** The pids of memctx's backends on `url`'s server (application_name memctx). */
export function memctxBackends(url: string): number[] {
  const u = new URL(url);
  u.search = "";
  try {
    const out = execFileSync(
      "psql",
      [u.toString(), "-Atc", "SELECT pid FROM pg_stat_activity WHERE application_name = 'memctx'"],
      { encoding: "utf8" },
    );
    return out.split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Samples the largest RSS of memctx's PostgreSQL backends every `everyMs` until stopped. */
export function watchBackends(url: string, everyMs = 250) {
  let stop = false;
  let max = 0;
  const done = (async () => {
    while (!stop) {
      for (const pid of memctxBackends(url)) max = Math.max(max, rssMiB(pid));
      await new Promise((res) => setTimeout(res, everyMs));
    }
  })();
  return {
    async stop() {
      stop = true;
      await done;
      return max;
    },
  };
}

/** Whether PostgreSQL at `url` answers. */
export function pgAlive(url: string): boolean {
  const u = new URL(url);
  u.search = "";
  try {
    execFileSync("psql", [u.toString(), "-Atc", "SELECT 1"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export const log = (s: string) => process.stdout.write(`${s}\n`);

/**
 * Polls /health every `everyMs` from a child process of its own, so that what this process does
 * meanwhile (parsing a 40 MB answer) does not delay the probes; `stop()` returns what it saw,
 * with the times (from its start) of the answers over `slowMs`.
 */
export function pollHealthApart(base: string, everyMs = 20, slowMs = 200) {
  const script = `
    const [url, every, slowMs] = process.argv.slice(1);
    const t0 = performance.now();
    const ms = []; const slow = []; let failed = 0; let stop = false;
    process.stdin.on("data", () => { stop = true; });
    while (!stop) {
      const t = performance.now();
      try { const r = await fetch(url + "/health"); await r.arrayBuffer(); if (r.status !== 200) failed++; }
      catch { failed++; }
      const took = Math.round(performance.now() - t);
      ms.push(took);
      if (took > Number(slowMs)) slow.push(took + " ms at " + ((t - t0) / 1000).toFixed(1) + " s");
      await new Promise((r) => setTimeout(r, Number(every)));
    }
    ms.sort((a, b) => a - b);
    console.log(JSON.stringify({ maxMs: ms.at(-1) ?? 0, p99Ms: ms[Math.floor(ms.length * 0.99)] ?? 0, probes: ms.length, failed, slow }));
    process.exit(0);
  `;
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", script, base, String(everyMs), String(slowMs)],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise((r) => child.once("exit", r));
  return {
    async stop(): Promise<{ maxMs: number; p99Ms: number; probes: number; failed: number; slow: string[] }> {
      child.stdin!.write("stop\n");
      await exited;
      return JSON.parse(out);
    },
  };
}
