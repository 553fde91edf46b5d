/**
 * A large text file uploaded and processed while /health is polled, its status read the way the
 * client's waitFor reads it (GET /ns/{ns}/document/{id}, every 500 ms):
 *   npx tsx bench/guard/large-text.ts [--mb 40] [--files 1] [--database-url postgres://…]
 * Prints how long processing took, /health's longest answer and p99 (polled every 20 ms), the
 * longest status read and the server's peak RSS.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { API_KEY, log, pollHealthApart, rssMiB, startServe, timed } from "./serve.js";

const { values } = parseArgs({
  options: {
    mb: { type: "string", default: "40" },
    files: { type: "string", default: "1" },
    "database-url": { type: "string" },
  },
});
const env: Record<string, string> = {};
if (values["database-url"]) {
  const u = values["database-url"];
  env.MEMCTX_DATABASE_URL = `${u}${u.includes("?") ? "&" : "?"}schema=guard_large_${process.pid}`;
}

/** Lines of varied words (a seeded generator), `bytes` long. */
function text(bytes: number, seed: number): Buffer {
  const words = [
    "harbour",
    "bicycle",
    "garden",
    "map",
    "bakery",
    "violin",
    "roof",
    "Lisbon",
    "Porto",
    "March",
  ];
  const out = Buffer.alloc(bytes, 0x20);
  let at = 0;
  let s = seed;
  while (at < bytes - 16) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    at += out.write(`${words[s % words.length]}${s % 1000}${s % 13 === 0 ? ".\n" : " "}`, at, "latin1");
  }
  return out;
}

const UPLOAD = `
import { openAsBlob } from "node:fs";
const [path, url, key] = process.argv.slice(1);
const form = new FormData();
form.append("file", await openAsBlob(path, { type: "text/plain" }), path.split("/").pop());
const res = await fetch(url, { method: "POST", headers: { authorization: "Bearer " + key }, body: form });
console.log(JSON.stringify({ ...(await res.json()), httpStatus: res.status }));
`;

const dir = mkdtempSync(join(tmpdir(), "guard-large-"));
const serve = await startServe(join(dir, "data"), env);
try {
  const files = Array.from({ length: Number(values.files) }, (_, i) => {
    const path = join(dir, `big-${i}.txt`);
    writeFileSync(path, text(Number(values.mb) * 1024 * 1024, i + 1));
    return path;
  });
  let peak = rssMiB(serve.pid);
  const started = performance.now();
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMiB(serve.pid));
  }, 50);
  const health = pollHealthApart(serve.url);
  const ids = await Promise.all(
    files.map(async (path) => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--input-type=module", "-e", UPLOAD, path, `${serve.url}/ns/big/document/file`, API_KEY],
        { maxBuffer: 1 << 20 },
      );
      return (JSON.parse(stdout) as { id: string }).id;
    }),
  );
  const uploaded = performance.now() - started;
  let reads = 0;
  let slowestRead = 0;
  let statuses: string[] = [];
  while (performance.now() - started < 900_000) {
    statuses = [];
    for (const id of ids) {
      const r = await timed(serve.url, "GET", `/ns/big/document/${id}`, undefined, 120_000);
      reads++;
      slowestRead = Math.max(slowestRead, r.ms);
      statuses.push(
        r.status === 200
          ? (JSON.parse(r.text) as { system: { status: string } }).system.status
          : `${r.status}`,
      );
    }
    if (statuses.every((s) => s === "done" || s === "failed")) break;
    await new Promise((res) => setTimeout(res, 500));
  }
  const h = await health.stop();
  clearInterval(sampler);
  log(
    `${values.files} x ${values.mb} MB text (${values["database-url"] ? "PostgreSQL" : "SQLite"}): ${statuses.join("/")} in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
      `/health max ${h.maxMs} ms, p99 ${h.p99Ms} ms (${h.probes} probes, ${h.failed} failed); ` +
      `status reads ${reads}, slowest ${slowestRead} ms; peak RSS ${peak} MiB; serve ${serve.alive() ? "up" : "DOWN"}`,
  );
  log(
    `  uploads answered at ${(uploaded / 1000).toFixed(1)} s; /health over 200 ms: ${h.slow.join(", ") || "none"}`,
  );
} finally {
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
}
