/**
 * A `memctx serve` on PostgreSQL through two outages, measured from outside (needs root: it stops
 * and starts the local cluster, and a superuser session takes the lock):
 *   npx tsx bench/pg-outage.ts --database-url postgres://… [--cluster "15 main"] [--down 10] [--lock 20]
 * 1. PostgreSQL stopped for `--down` seconds, then started: how /health and an add answer while it
 *    is down (status, time), and how long after the start /health is 200 again and an add and a
 *    search succeed, without restarting memctx; every document acknowledged before is still there.
 * 2. Another session holds `LOCK TABLE documents IN ACCESS EXCLUSIVE MODE` for `--lock` seconds:
 *    how long /health takes, how an add and a search end (status, time), and whether they work
 *    once it is released.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { API_KEY, memctxCommand, startServe } from "./suite/common.js";

const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    cluster: { type: "string", default: "15 main" },
    down: { type: "string", default: "10" },
    lock: { type: "string", default: "20" },
  },
});
const databaseUrl = values["database-url"] ?? process.env.MEMCTX_DATABASE_URL;
if (!databaseUrl) throw new Error("--database-url (or MEMCTX_DATABASE_URL) is required");
const [version, name] = values.cluster!.split(" ");
const schema = `bench_outage_${process.pid}`;
const url = `${databaseUrl}${databaseUrl.includes("?") ? "&" : "?"}schema=${schema}`;

const log = (s: string) => process.stdout.write(`${s}\n`);
const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" };

const { args } = await memctxCommand((s) => process.stderr.write(`${s}\n`));
const dir = mkdtempSync(join(tmpdir(), "memctx-outage-"));
const serve = await startServe(args, dir, 1, { MEMCTX_DATABASE_URL: url });

/** One request: its status (0: no answer at all) and how long it took, cut off at 30 s. */
async function timed(path: string, body?: unknown): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  try {
    const res = await fetch(`${serve.url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    await res.arrayBuffer();
    return { status: res.status, ms: Math.round(performance.now() - t) };
  } catch {
    return { status: 0, ms: Math.round(performance.now() - t) };
  }
}
const add = (i: number) =>
  timed("/ns/outage/document", { content: `Note ${i}: the kiln reached 1200 degrees.`, id: `n${i}` });
const search = () => timed("/ns/outage/search", { query: "kiln degrees" });
const pgctl = (action: "stop" | "start") =>
  execFileSync("pg_ctlcluster", [version!, name!, action], { stdio: "ignore" });

try {
  let acknowledged = 0;
  for (let i = 0; i < 20; i++) if ((await add(i)).status === 200) acknowledged++;
  log(`before: ${acknowledged} documents acknowledged`);

  // 1. A restart.
  pgctl("stop");
  const stopped = performance.now();
  const down = Number(values.down) * 1000;
  const whileDown = { health: [] as number[], adds: [] as string[] };
  while (performance.now() - stopped < down) {
    const h = await timed("/health");
    whileDown.health.push(h.ms);
    const a = await add(1000 + whileDown.adds.length);
    whileDown.adds.push(`${a.status}/${a.ms}ms`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  log(
    `down ${values.down} s: /health max ${Math.max(...whileDown.health)} ms; adds (status/time): ${whileDown.adds.join(" ")}`,
  );
  pgctl("start");
  const started = performance.now();
  let healthyAfter = -1;
  while (performance.now() - started < 60_000) {
    if ((await timed("/health")).status === 200) {
      healthyAfter = Math.round(performance.now() - started);
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const after = await add(2000);
  const found = await search();
  log(
    `started: /health 200 after ${healthyAfter} ms; then add ${after.status} (${after.ms} ms), search ${found.status} (${found.ms} ms)`,
  );
  const list = await fetch(`${serve.url}/ns/outage/list/documents?limit=100`, {
    method: "POST",
    headers,
    body: "{}",
  });
  const { pagination } = (await list.json()) as { pagination: { totalItems?: number } };
  log(
    `documents stored: ${pagination.totalItems} (acknowledged: ${acknowledged} before the stop, 1 after it)`,
  );

  // 2. A lock held by another session.
  const holder = spawn(
    "psql",
    [
      databaseUrl,
      "-v",
      "ON_ERROR_STOP=1",
      "-c",
      `BEGIN; LOCK TABLE "${schema}".documents IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(${values.lock}); COMMIT;`,
    ],
    { stdio: "ignore" },
  );
  await new Promise((r) => setTimeout(r, 1000));
  const [h, a, s] = await Promise.all([timed("/health"), add(3000), search()]);
  log(
    `locked: /health ${h.status} in ${h.ms} ms; add ${a.status} in ${a.ms} ms; search ${s.status} in ${s.ms} ms`,
  );
  await new Promise((r) => holder.once("exit", r));
  const [a2, s2] = [await add(3001), await search()];
  log(`released: add ${a2.status} in ${a2.ms} ms; search ${s2.status} in ${s2.ms} ms`);
} finally {
  try {
    pgctl("start");
  } catch {
    // already running
  }
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
  try {
    execFileSync("psql", [databaseUrl, "-c", `DROP SCHEMA IF EXISTS "${schema}" CASCADE`], {
      stdio: "ignore",
    });
  } catch {
    // left for the operator
  }
}
