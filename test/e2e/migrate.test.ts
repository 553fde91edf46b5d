import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Document } from "../../src/api/index.js";
import { MemoryClient } from "../../src/client/index.js";
import { ROOT, type ServeChild, spawnServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";

const children: ServeChild[] = [];
const dirs: ReturnType<typeof tempDir>[] = [];
const clients: MemoryClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(children.splice(0).map(stopChild));
  for (const d of dirs.splice(0)) d.remove();
});

/** `memctx migrate …` as a child process; `stderr` grows as it writes. */
function spawnMigrate(args: string[], env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "migrate", ...args],
    {
      cwd: ROOT,
      env: { ...process.env, MEMCTX_MIGRATE_FROM_KEY: TEST_KEY, MEMCTX_MIGRATE_TO_KEY: TEST_KEY, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const out = { stderr: "", stdout: "" };
  child.stderr!.on("data", (d: Buffer) => {
    out.stderr += d.toString();
  });
  child.stdout!.on("data", (d: Buffer) => {
    out.stdout += d.toString();
  });
  const exited = new Promise<number | NodeJS.Signals | null>((res) =>
    child.once("exit", (code, signal) => res(signal ?? code)),
  );
  return { child, out, exited };
}

async function allDocuments(client: MemoryClient, namespace: string): Promise<Document[]> {
  const out: Document[] = [];
  for (let page = 1; ; page++) {
    const res = await client.ns(namespace).documents.list({ page, limit: 100 });
    out.push(...res.documents);
    if (page >= res.pagination.totalPages) return out;
  }
}

describe("memctx migrate between two memctx serve processes", () => {
  it("copies documents with ids, content, metadata and dates; killed midway and run again, every document is there once", async () => {
    const from = tempDir("memctx-migrate-from-");
    const to = tempDir("memctx-migrate-to-");
    dirs.push(from, to);
    // The source only serves what it holds; the target processes what arrives (one thread).
    const source = await spawnServe(from.path, {}, ["--workers", "0"]);
    const target = await spawnServe(to.path, {}, ["--workers", "1"]);
    children.push(source, target);
    const src = new MemoryClient({ baseUrl: source.url, apiKey: TEST_KEY, maxRetries: 0 });
    const dst = new MemoryClient({ baseUrl: target.url, apiKey: TEST_KEY, maxRetries: 0 });
    clients.push(src, dst);

    const ALPHA = 120;
    for (let i = 0; i < ALPHA; i++) {
      await src.ns("alpha").documents.add({
        content: `Alpha note ${i}: the blue heron nests by the river in spring number ${i}.`,
        // Half with a caller id, half with only the service's id: both must travel.
        ...(i % 2 === 0 ? { id: `note-${i}` } : {}),
        metadata: { n: i, kind: i % 3 === 0 ? "bird" : "river", tags: ["a", `t${i}`] },
        ...(i % 5 === 0 ? { date: `2024-03-${String((i % 28) + 1).padStart(2, "0")}` } : {}),
      });
    }
    await src.ns("beta").documents.add({ content: "Beta holds one note about tea.", id: "tea" });
    await src.ns("beta").update({ supportingContext: "Notes of the tea club." });
    const alphaSource = await allDocuments(src, "alpha");
    expect(alphaSource).toHaveLength(ALPHA);

    // One at a time, so that the kill lands midway: after the first progress line (25 documents).
    const first = spawnMigrate(["--from", source.url, "--to", target.url, "--concurrency", "1"]);
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (/alpha 25\/120 documents/.test(first.out.stderr)) {
          clearInterval(timer);
          first.child.kill("SIGKILL");
          resolve();
        }
      }, 5);
      void first.exited.then((code) => {
        clearInterval(timer);
        reject(new Error(`migrate exited (${code}) before it was killed: ${first.out.stderr}`));
      });
    });
    await first.exited;
    const partial = (await allDocuments(dst, "alpha")).length;
    expect(partial).toBeGreaterThanOrEqual(25);
    expect(partial).toBeLessThan(ALPHA);

    // A dry run now says what is left and writes nothing.
    const dry = spawnMigrate(["--from", source.url, "--to", target.url, "--dry-run"]);
    expect(await dry.exited, dry.out.stderr).toBe(0);
    expect(dry.out.stderr).toContain(
      `would copy: 2 namespaces, to copy ${ALPHA - partial + 1}, skipped ${partial} (already there), failed 0`,
    );
    expect((await allDocuments(dst, "alpha")).length).toBe(partial);

    const second = spawnMigrate(["--from", source.url, "--to", target.url]);
    expect(await second.exited, second.out.stderr).toBe(0);
    expect(second.out.stderr).toContain(
      `done: 2 namespaces, copied ${ALPHA - partial + 1}, skipped ${partial} (already there), failed 0`,
    );

    const copied = await allDocuments(dst, "alpha");
    expect(copied).toHaveLength(ALPHA);
    const byKey = new Map(copied.map((d) => [d.customId, d]));
    expect(byKey.size).toBe(ALPHA); // each once
    for (const s of alphaSource) {
      const key = s.customId ?? s.id;
      const d = byKey.get(key);
      expect(d, key).toBeDefined();
      expect(d!.content).toBe(s.content);
      expect(d!.metadata).toEqual(s.metadata);
      // Its document date, else when the source stored it.
      expect(d!.date).toBe(s.date ?? s.system.createdAt);
      // Readable on the target by the source's id.
      expect((await dst.ns("alpha").documents.get(key)).content).toBe(s.content);
    }
    expect((await allDocuments(dst, "beta")).map((d) => d.customId)).toEqual(["tea"]);
    expect((await dst.ns("beta").get()).supportingContext).toBe("Notes of the tea club.");

    // Processed again on arrival: the target searches what it received.
    await dst.ns("beta").documents.waitFor("tea");
    const hits = await dst.ns("beta").search({ query: "tea", searchMode: "chunks", threshold: 0 });
    expect(hits.results.length).toBeGreaterThan(0);

    // A third run finds nothing left to do.
    const third = spawnMigrate(["--from", source.url, "--to", target.url, "--namespace", "alpha"]);
    expect(await third.exited, third.out.stderr).toBe(0);
    expect(third.out.stderr).toContain(
      `done: 1 namespace, copied 0, skipped ${ALPHA} (already there), failed 0`,
    );
  });

  it("refuses a missing source, a missing key and a bad option, with one line each", async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["--to", "http://127.0.0.1:1"], {}, /--from is required/],
      [
        ["--from", "http://127.0.0.1:1", "--to", "http://127.0.0.1:2"],
        { MEMCTX_MIGRATE_FROM_KEY: "" },
        /--from-key \(or MEMCTX_MIGRATE_FROM_KEY\) is required/,
      ],
      [["--from", "http://127.0.0.1:1", "--to", "http://127.0.0.1:1"], {}, /the same: nothing to copy/],
      [["--from", "http://x", "--to", "http://y", "--from-api", "v2"], {}, /--from-api must be v5 or v3/],
      [["--from", "http://x", "--to", "http://y", "--namespace", "bad name"], {}, /namespace 'bad name'/],
      [
        ["--from", "http://x", "--to", "http://y", "--to-namespace", "b"],
        {},
        /--to-namespace needs exactly one --namespace/,
      ],
      [["--from", "/nonexistent/memctx-dir", "--to", "http://y"], {}, /holds no memctx data/],
    ];
    for (const [args, env, message] of cases) {
      const run = spawnMigrate(args, env);
      const code = await run.exited;
      expect(code, args.join(" ")).not.toBe(0);
      expect(run.out.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(run.out.stderr, args.join(" ")).toMatch(message);
    }
  });
});
