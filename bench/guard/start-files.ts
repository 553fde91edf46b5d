/**
 * What a start leaves of a crashed upload, and the mode `memctx mcp` gives a new data directory:
 *   npx tsx bench/guard/start-files.ts
 * 1. A data directory holds uploads/<dead pid>-….part, as a process killed mid-upload leaves it;
 *    `memctx serve` starts on it: is the file still there once it listens?
 * 2. `memctx mcp --data-dir <new>` (stdio, standard input closed at once): the new directory's mode.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { log, ROOT, startServe } from "./serve.js";

const base = mkdtempSync(join(tmpdir(), "guard-start-"));
try {
  const data = join(base, "serve");
  mkdirSync(join(data, "uploads"), { recursive: true });
  const dead = spawnSync(process.execPath, ["-e", ""]).pid;
  const stale = join(data, "uploads", `${dead}-00112233445566778899aabb.part`);
  writeFileSync(stale, Buffer.alloc(1024 * 1024));
  const serve = await startServe(data);
  log(
    `1. stale ${stale.slice(data.length + 1)} (1 MiB) after memctx serve started: ${existsSync(stale) ? "STILL THERE" : "gone"}`,
  );
  await serve.close();

  const fresh = join(base, "mcp", "data");
  const umask = process.umask(0o022);
  const mcp = spawnSync(
    process.execPath,
    [process.env.GUARD_CLI ?? join(ROOT, "dist/cli/main.js"), "mcp", "--data-dir", fresh],
    {
      input: "",
      timeout: 60_000,
      env: { ...process.env, MEMCTX_API_URL: "", MEMCTX_API_KEY: "" },
    },
  );
  process.umask(umask);
  log(
    `2. memctx mcp --data-dir (umask 022, exit ${mcp.status}): ${existsSync(fresh) ? `mode ${(statSync(fresh).mode & 0o777).toString(8)}` : "not made"}`,
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
