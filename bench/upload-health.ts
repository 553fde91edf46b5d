/**
 * How responsive a `memctx serve` child stays, and how much memory it takes, while large files are
 * uploaded to it and processed:
 *   npx tsx bench/upload-health.ts [--mb 40] [--mb 50 --mb 40 ...] [--cli other/dist/cli/main.js]
 * (--cli: another build's memctx, to compare with on the same machine in the same session.)
 * One text file per --mb, all uploaded at once (multipart, to /ns/{ns}/document/file), each by a
 * child process of its own: a 40 MB form sent from this process delayed its own /health probes by
 * 500 ms. /health is polled one request after another (every 10 ms) from the first upload until
 * every document is done; prints its max and p99, the server's peak RSS (every 50 ms) and how long
 * each stage took.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs, promisify } from "node:util";
import { DATABASE_FILE } from "../src/engine/store/db.js";
import { API_KEY, memctxCommand, NODE, percentiles, rssMiB, startServe } from "./suite/common.js";

const { values } = parseArgs({
  options: { mb: { type: "string", multiple: true, default: ["40"] }, cli: { type: "string" } },
});
const sizes = values.mb.map(Number);

/** Lines of varied words (a seeded generator), `bytes` long: text that chunks and indexes as prose does. */
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
    const w = `${words[s % words.length]}${s % 1000}${s % 13 === 0 ? ".\n" : " "}`;
    at += out.write(w, at, "latin1");
  }
  return out;
}

/** A child's upload: the file streamed from disk as the form's part (fs.openAsBlob). */
const UPLOAD = `
import { openAsBlob } from "node:fs";
const [path, url, key] = process.argv.slice(1);
const form = new FormData();
form.append("file", await openAsBlob(path, { type: "text/plain" }), path.split("/").pop());
const res = await fetch(url, { method: "POST", headers: { authorization: "Bearer " + key }, body: form });
const body = await res.json();
console.log(JSON.stringify({ id: body.id, status: res.status }));
`;

const log = (s: string) => process.stderr.write(`${s}\n`);
const { args, how } = values.cli ? { args: [values.cli], how: values.cli } : await memctxCommand(log);
const dir = mkdtempSync(join(tmpdir(), "memctx-upload-health-"));
const serve = await startServe(args, dir, 2);
try {
  const files = sizes.map((mb, i) => {
    const path = join(dir, `big-${i}.txt`);
    writeFileSync(path, text(mb * 1024 * 1024, i + 1));
    return path;
  });
  const idle = rssMiB(serve.pid) ?? 0;
  let peak = idle;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMiB(serve.pid) ?? 0);
  }, 50);
  const health: number[] = [];
  let resets = 0;
  let running = true;
  const poll = (async () => {
    while (running) {
      const t = performance.now();
      // A kept-alive connection the server closed as the probe went out is reset: counted, not fatal.
      const ok = await fetch(`${serve.url}/health`)
        .then((r) => r.arrayBuffer())
        .then(
          () => true,
          () => false,
        );
      if (ok) health.push(performance.now() - t);
      else resets++;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const started = performance.now();
  const uploads = await Promise.all(
    files.map(async (path) => {
      const { stdout } = await promisify(execFile)(
        NODE,
        ["--input-type=module", "-e", UPLOAD, path, `${serve.url}/ns/big/document/file`, API_KEY],
        { maxBuffer: 1 << 20 },
      );
      const { id, status } = JSON.parse(stdout) as { id: string; status: number };
      return { id, status, ms: performance.now() - started };
    }),
  );
  const uploaded = performance.now() - started;
  const healthDuringUpload = [...health];
  // Statuses are read from the database file, not asked of the server: GET /ns/{ns}/document/{id}
  // returns a done document's whole text, and for 40 MB that one answer held its event loop 1.7 s.
  const db = new DatabaseSync(join(dir, DATABASE_FILE), { readOnly: true });
  let statuses: string[] = [];
  while (performance.now() - started < 900_000) {
    statuses = uploads.map(
      (u) =>
        (db.prepare("SELECT status FROM documents WHERE id = ?").get(u.id) as { status: string } | undefined)
          ?.status ?? "unknown",
    );
    if (statuses.every((s) => s === "done" || s === "failed")) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  db.close();
  const processed = performance.now() - started;
  running = false;
  await poll;
  clearInterval(sampler);
  const all = percentiles(health);
  const up = percentiles(healthDuringUpload);
  console.log(
    `${sizes.map((s) => `${s} MB`).join(" + ")} text uploaded at once to memctx serve (${how}):\n` +
      `  uploads answered ${uploads.map((u) => `${u.status} in ${(u.ms / 1000).toFixed(1)} s`).join(", ")}; ` +
      `all ${statuses.join("/")} ${(processed / 1000).toFixed(1)} s after the first byte\n` +
      `  /health while uploading: max ${Math.max(...healthDuringUpload).toFixed(0)} ms, p99 ${up.p99.toFixed(0)} ms (${healthDuringUpload.length} probes in ${(uploaded / 1000).toFixed(1)} s)\n` +
      `  /health until processed: max ${Math.max(...health).toFixed(0)} ms, p99 ${all.p99.toFixed(0)} ms (${health.length} probes, ${resets} reset)\n` +
      `  RSS: ${idle} MiB idle, peak ${peak} MiB`,
  );
} finally {
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
}
