/**
 * What a forget costs now that it takes the memory's source sentence out of its document's chunks
 * (memory/forget.ts): one DELETE /ns/{ns}/memories of 1 and of 20 memories drawn from one plain
 * document of about `kb` KB, on the embedded engine (SQLite temp file, or PostgreSQL with
 * MEMCTX_DATABASE_URL), through the in-process HTTP handler. Also a chunks search before and after.
 *
 *   npx tsx bench/forget.ts [kb=200]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEngine } from "../src/engine/index.js";

const KB = Number(process.argv[2] ?? 200);
const KEY = "mk_bench_forget_0123456789";
const COLOURS = ["red", "blue", "green", "amber", "violet", "silver", "ochre"];
const THINGS = ["ladder", "drill", "tent", "kayak", "sewing machine", "projector", "bread maker"];

/** Varied facts, one per sentence, paragraphs of five. */
function documentOf(kb: number): string {
  const out: string[] = [];
  let size = 0;
  for (let i = 0; size < kb * 1024; i++) {
    const s = `Maria keeps the ${COLOURS[i % 7]} ${THINGS[(i * 3) % 7]} number ${i} in storage room ${100 + (i % 89)}.`;
    out.push(i % 5 === 4 ? `${s}\n\n` : `${s} `);
    size += s.length + 1;
  }
  return out.join("");
}

const dir = mkdtempSync(join(tmpdir(), "memctx-forget-bench-"));
const engine = await openEngine({ dataDir: dir, apiKey: KEY, log: () => {} });
const call = async (method: string, path: string, body?: unknown) => {
  const res = await engine.fetch(
    new Request(`http://bench${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  // biome-ignore lint/suspicious/noExplicitAny: a bench reads a few fields
  return (await res.json()) as any;
};
const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const t0 = performance.now();
  const v = await fn();
  return [v, Math.round((performance.now() - t0) * 10) / 10];
};

try {
  const content = documentOf(KB);
  const { id } = await call("POST", "/ns/bench/document", { content, dreaming: "instant" });
  for (;;) {
    const d = await call("GET", `/ns/bench/document/${id}?include=chunks`);
    if (d.system.status === "failed") throw new Error(d.error);
    if (d.system.status === "done" && d.system.dreamingStatus === "done") {
      console.log(`document: ${Math.round(content.length / 1024)} KB, ${d.chunks.length} chunks`);
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const memories: { id: string; memory: string }[] = [];
  for (let page = 1; memories.length < 21; page++) {
    const got = await call("POST", `/ns/bench/list/memories?limit=100&page=${page}`, {});
    memories.push(...got.memories);
    if (got.memories.length < 100) break;
  }
  console.log(`memories listed: ${memories.length}`);
  const search = () =>
    call("POST", "/ns/bench/search", { query: "violet kayak number 5", searchMode: "chunks" });
  await search(); // the first search of a process loads what search needs
  const [, before] = await timed(search);
  const [one, oneMs] = await timed(() => call("DELETE", "/ns/bench/memories", { ids: [memories[0]!.id] }));
  const [many, manyMs] = await timed(() =>
    call("DELETE", "/ns/bench/memories", { ids: memories.slice(1, 21).map((m) => m.id) }),
  );
  const [, after] = await timed(search);
  console.log(
    `forget 1 memory: ${oneMs} ms (count ${one.count}); 20 memories: ${manyMs} ms (count ${many.count})`,
  );
  console.log(`chunks search: ${before} ms before, ${after} ms after`);
} finally {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}
