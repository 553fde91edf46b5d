/**
 * A zip bomb against a `memctx serve` child: a Word document of 0.5 MB whose text part inflates to
 * 150 MB, sent three ways: as it is (refused on arrival by its directory's sizes), with a directory
 * that declares 1 KB (failed while it inflates), and as it is to a server whose inflation limits
 * were raised past it (failed by the conversion's memory cap). For each: the answer, how long until
 * the document failed, the server's peak RSS (every 50 ms), and how long a small document sent
 * right after the bomb took to be done (while the bomb was processed).
 *   npx tsx bench/zip-bomb.ts [--cli other/dist/cli/main.js]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { makeDocxBomb } from "../test/engine/ingest/file-fixtures.js";
import { API_KEY, memctxCommand, rssMiB, startServe } from "./suite/common.js";

const MB = 1024 * 1024;
const auth = { authorization: `Bearer ${API_KEY}` };
const log = (s: string) => process.stderr.write(`${s}\n`);
const { values } = parseArgs({ options: { cli: { type: "string" } } });
const { args, how } = values.cli ? { args: [values.cli], how: values.cli } : await memctxCommand(log);

async function statusOf(url: string, id: string): Promise<{ status: string; error?: string | null }> {
  const doc = (await (await fetch(`${url}/ns/bomb/document/${id}`, { headers: auth })).json()) as {
    system: { status: string };
    error?: string | null;
  };
  return { status: doc.system.status, error: doc.error };
}

async function until(url: string, id: string, ms = 300_000) {
  const started = performance.now();
  for (;;) {
    const s = await statusOf(url, id);
    if (s.status === "done" || s.status === "failed" || performance.now() - started > ms) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function run(name: string, bomb: Uint8Array, env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "memctx-bomb-"));
  const serve = await startServe(args, dir, 2, env);
  try {
    const idle = rssMiB(serve.pid) ?? 0;
    let peak = idle;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMiB(serve.pid) ?? 0);
    }, 50);
    const started = performance.now();
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(bomb)]), "bomb.docx");
    const res = await fetch(`${serve.url}/ns/bomb/document/file`, {
      method: "POST",
      headers: auth,
      body: form,
    });
    const body = (await res.json()) as { id?: string; details?: string };
    const next = performance.now();
    const small = (await (
      await fetch(`${serve.url}/ns/bomb/document`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ content: "Ines moved to Porto in May." }),
      })
    ).json()) as { id: string };
    const [smallEnd, bombEnd] = await Promise.all([
      until(serve.url, small.id).then((s) => ({ ...s, s: (performance.now() - next) / 1000 })),
      body.id
        ? until(serve.url, body.id).then((s) => ({ ...s, s: (performance.now() - started) / 1000 }))
        : undefined,
    ]);
    let outcome = `answered ${res.status}${body.details ? ` (${body.details})` : ""}`;
    if (bombEnd) outcome += `; ${bombEnd.status} after ${bombEnd.s.toFixed(1)} s (${bombEnd.error})`;
    clearInterval(sampler);
    console.log(
      `${name}: ${outcome}\n  small document sent next: ${smallEnd.status} in ${smallEnd.s.toFixed(1)} s; ` +
        `RSS ${idle} MiB idle, peak ${peak} MiB`,
    );
  } finally {
    await serve.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const bomb = makeDocxBomb(150 * MB);
console.log(`zip bomb: ${(bomb.length / MB).toFixed(2)} MB .docx inflating to 150 MB, memctx serve (${how})`);
await run("as it is, default limits", bomb, {});
await run("directory declaring 1 KB, default limits", makeDocxBomb(150 * MB, { lie: true }), {});
// The cap stops a heap that grows; one allocation past it (a 150 MB string) would end the process,
// so the limits are raised only past a 24 MB bomb, whose tree outgrows the cap.
await run(
  "a 24 MB bomb past inflation limits raised to 32 MiB (MEMCTX_FILE_MEMORY_MB default 512)",
  makeDocxBomb(24 * MB),
  {
    MEMCTX_MAX_INFLATED_ENTRY_BYTES: String(32 * MB),
    MEMCTX_MAX_INFLATED_BYTES: String(32 * MB),
  },
);
