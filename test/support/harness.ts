/**
 * Shared by the engine's tests: temp data directories, an in-process server on a real socket,
 * and `memctx serve` as a child process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import type { EngineLimits } from "../../src/engine/context.js";
import { type RunningServer, startServer } from "../../src/engine/server.js";
import { type Db, openDatabase } from "../../src/engine/store/db.js";
import type { NewMemoryRow } from "../../src/engine/store/memories.js";
import { perFile } from "./per-file.js";

export const ROOT = resolve(import.meta.dirname, "../..");

/**
 * The backend the engine's tests run on: PostgreSQL when MEMCTX_TEST_DATABASE_URL is set
 * (test/postgres-setup.ts), else SQLite.
 */
export const TEST_BACKEND: "sqlite" | "postgres" = process.env.MEMCTX_DATABASE_URL ? "postgres" : "sqlite";

/** Options for a test's own openDatabase: the PostgreSQL URL when the tests run on it. */
export const testDatabase = (): { databaseUrl?: string } =>
  process.env.MEMCTX_DATABASE_URL ? { databaseUrl: process.env.MEMCTX_DATABASE_URL } : {};

export function tempDir(prefix = "memctx-test-"): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * Opens connections to a store of the test's own: every connection a test opens reaches the same
 * store (as replicas and processing threads do), and after each test they are closed and the
 * store removed. Call it at the top of a test file.
 */
export function storeConnections(): () => Promise<Db> {
  let dir: ReturnType<typeof tempDir> | undefined;
  const open: Db[] = [];
  afterEach(async () => {
    for (const d of open.splice(0)) if (d.isOpen) await d.close();
    dir?.remove();
    dir = undefined;
  });
  return async () => {
    dir ??= tempDir();
    const db = await openDatabase(dir.path, testDatabase());
    open.push(db);
    return db;
  };
}

export const TEST_KEY = "mk_test_local_organization_key";

/** A memory as written straight to the store: no document, no subject, nothing but its text. */
export const directMemory = (namespaceId: string, memory: string): NewMemoryRow => ({
  namespaceId,
  memory,
  metadata: {},
  isStatic: false,
  isInference: false,
  subject: null,
  attribute: null,
  eventDate: null,
  forgetAfter: null,
  documentId: null,
});

export interface TestServer extends RunningServer {
  key: string;
  client(key?: string): MemoryClient;
  /** A raw request with the key (or `key: null` for none): for what the client refuses to send. */
  call(
    method: string,
    path: string,
    init?: { body?: unknown; key?: string | null; headers?: Record<string, string> },
  ): Promise<Response>;
}

/** The engine on 127.0.0.1, port 0, in this process. */
export async function startTestServer(
  dataDir: string,
  opts: { workers?: number; limits?: Partial<EngineLimits>; clock?: () => number } = {},
): Promise<TestServer> {
  const server = await startServer({
    dataDir,
    port: 0,
    host: "127.0.0.1",
    apiKey: TEST_KEY,
    log: (m: string) => process.env.MEMCTX_TEST_LOG && process.stderr.write(`LOG ${m}\n`),
    ...opts,
  });
  const clients: MemoryClient[] = [];
  return {
    ...server,
    key: TEST_KEY,
    client(key = TEST_KEY) {
      const c = new MemoryClient({ baseUrl: server.url, apiKey: key, maxRetries: 0 });
      clients.push(c);
      return c;
    },
    call(method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      const key = init.key === undefined ? TEST_KEY : init.key;
      if (key) headers.authorization = `Bearer ${key}`;
      let body: string | undefined;
      if (init.body !== undefined) {
        body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
        headers["content-type"] ??= "application/json";
      }
      return fetch(`${server.url}${path}`, { method, headers, body });
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
    },
  };
}

/**
 * One engine on 127.0.0.1 for the whole file (or describe block), in a temp data directory of its
 * own, with a client of the test key; closed and removed after the last test
 * (`const { server, client } = serverPerFile()` at the top of a file; see perFile).
 */
export function serverPerFile(
  opts: { workers?: number; limits?: Partial<EngineLimits>; clock?: () => number; prefix?: string } = {},
): { server: TestServer; client: MemoryClient; dir: string } {
  const { prefix, ...serverOpts } = opts;
  const dir = tempDir(prefix);
  const server = perFile(
    () => startTestServer(dir.path, serverOpts),
    async (s) => {
      await s.close();
      dir.remove();
    },
  );
  // Closed with the server.
  const client = perFile(() => server.client());
  return { server, client, dir: dir.path };
}

/**
 * Logs the user's turns as an agent does: each appended to the namespace's conversation "chat" on
 * a day of its own (the first on 2026-03-01), its memories waited for before the next.
 */
export async function tellTurns(client: MemoryClient, ns: string, turns: readonly string[]): Promise<void> {
  for (const [i, turn] of turns.entries()) {
    const day = `2026-03-${String(i + 1).padStart(2, "0")}`;
    await client
      .ns(ns)
      .documents.add({ id: "chat", content: `[${day}] user: ${turn}`, append: true, dreaming: "instant" });
    await client.ns(ns).documents.waitFor("chat", { until: "memories" });
  }
}

export interface ServeChild {
  child: ChildProcess;
  url: string;
  stdout(): string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<number | NodeJS.Signals | null>;
}

/** `memctx serve` as a child process (the pinned node running the TypeScript sources through tsx). */
export async function spawnServe(
  dataDir: string,
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<ServeChild> {
  const started = launchServe(dataDir, env, args);
  const url = await started.listening;
  return { ...started, url };
}

/** A `memctx serve` child just launched: `listening` resolves with its URL once it listens. */
export interface LaunchedServe extends Omit<ServeChild, "url"> {
  listening: Promise<string>;
}

/**
 * `memctx serve` as a child process, answered at once (spawnServe waits for it to listen): a test
 * can watch what it says while it starts. `listening` fails once the child exits, or after
 * `startMs` (default 20 s) without listening.
 */
export function launchServe(
  dataDir: string,
  env: Record<string, string> = {},
  args: string[] = [],
  startMs = 20_000,
): LaunchedServe {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "src/cli/main.ts"),
      "serve",
      "--port",
      "0",
      "--data-dir",
      dataDir,
      ...args,
    ],
    {
      cwd: ROOT,
      env: { ...process.env, MEMCTX_API_KEY: TEST_KEY, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | NodeJS.Signals | null>((res) => {
    child.once("exit", (code, signal) => res(signal ?? code));
  });
  const listening = new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`memctx serve did not start: ${out}${err}`)), startMs);
    const onData = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        res(m[1]!);
      }
    };
    child.stdout!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`memctx serve exited (${code}) before listening: ${out}${err}`));
    });
  });
  // A test that stops watching (it failed first) must not leave an unhandled rejection behind.
  listening.catch(() => {});
  return { child, stdout: () => out + err, exited, listening };
}

/** Stops a child for good (SIGKILL if it does not exit on SIGTERM). */
export async function stopChild(c: Pick<ServeChild, "child" | "exited">): Promise<void> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return;
  c.child.kill("SIGTERM");
  const timer = setTimeout(() => c.child.kill("SIGKILL"), 5000);
  await c.exited;
  clearTimeout(timer);
}

export interface McpHttpChild {
  /** e.g. http://127.0.0.1:PORT/mcp */
  url: string;
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * `memctx mcp --http --port 0` as a child process (the pinned node running the TypeScript sources
 * through tsx) with only `env` (and PATH) for its environment; resolves once it says where it listens.
 */
export async function spawnMcpHttp(env: Record<string, string>, args: string[] = []): Promise<McpHttpChild> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "mcp", "--http", "--port", "0", ...args],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address within 20 s: ${stderr}`)), 20_000);
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = /MCP server on (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return {
    url,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
