/**
 * A small file system filled by adds, with the default disk reserve (5%, at least 64 MB):
 *   mount -t tmpfs -o size=160m tmpfs /mnt/small      # as root
 *   npx tsx bench/guard/disk.ts --dir /mnt/small [--docs 63] [--kb 600] [--ballast-mb 40]
 * A ballast file takes `--ballast-mb` first; then `--docs` documents of `--kb` KB are sent as fast
 * as they are answered while processing runs. Prints how the adds were answered (status and
 * error title, in order), the least free space seen, then removes the ballast and says how long
 * the accepted documents took to be processed.
 */
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { log, startServe, timed } from "./serve.js";

const { values } = parseArgs({
  options: {
    dir: { type: "string" },
    docs: { type: "string", default: "63" },
    kb: { type: "string", default: "600" },
    "ballast-mb": { type: "string", default: "40" },
  },
});
if (!values.dir) throw new Error("--dir (a directory on a small file system) is required");
const data = join(values.dir, `guard-disk-${process.pid}`);
mkdirSync(data, { recursive: true });
const free = () => {
  const s = statfsSync(data);
  return s.bavail * s.bsize;
};
const MB = 1024 * 1024;

const ballastPath = join(values.dir, `ballast-${process.pid}`);
const fd = openSync(ballastPath, "w");
const piece = Buffer.alloc(MB);
for (let i = 0; i < Number(values["ballast-mb"]); i++) writeSync(fd, piece);
closeSync(fd);

const serve = await startServe(data, { MEMCTX_DATABASE_URL: "" });
let least = free();
const watch = setInterval(() => {
  least = Math.min(least, free());
}, 50);
try {
  const text = (i: number) =>
    `Note ${i}: ${"the ferry left the harbour at dawn with cargo. ".repeat((Number(values.kb) * 1024) / 46)}`;
  const answers: string[] = [];
  const accepted: string[] = [];
  for (let i = 0; i < Number(values.docs); i++) {
    const r = await timed(serve.url, "POST", "/ns/disk/document", { content: text(i), id: `d${i}` });
    const title =
      r.status === 200 ? "" : ` ${(JSON.parse(r.text) as { error?: string }).error ?? r.text.slice(0, 40)}`;
    answers.push(`${r.status}${title}`);
    if (r.status === 200) accepted.push(`d${i}`);
  }
  const runs = answers.reduce<{ what: string; n: number }[]>((out, a) => {
    const last = out.at(-1);
    if (last?.what === a) last.n++;
    else out.push({ what: a, n: 1 });
    return out;
  }, []);
  log(`adds: ${runs.map((r) => `${r.n} x ${r.what}`).join(", ")}; least free ${(least / MB).toFixed(1)} MB`);
  const status = async () => {
    const r = await timed(serve.url, "POST", "/ns/disk/list/documents?limit=100", {});
    const docs = (JSON.parse(r.text) as { documents: { customId: string; system: { status: string } }[] })
      .documents;
    return docs.filter((d) => d.system.status !== "done" && d.system.status !== "failed").length;
  };
  log(`open after the adds: ${await status()} of ${accepted.length} accepted`);
  rmSync(ballastPath);
  const freed = performance.now();
  let open = await status();
  while (open > 0 && performance.now() - freed < 300_000) {
    await new Promise((r) => setTimeout(r, 500));
    open = await status();
  }
  log(
    `ballast removed: ${open} still open after ${((performance.now() - freed) / 1000).toFixed(1)} s; least free ${(least / MB).toFixed(1)} MB; serve ${serve.alive() ? "up" : "DOWN"}`,
  );
} finally {
  clearInterval(watch);
  await serve.close();
  rmSync(data, { recursive: true, force: true });
  rmSync(ballastPath, { force: true });
}
