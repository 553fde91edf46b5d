/**
 * Moving a large namespace into another (DELETE /ns/{ns}?moveTo=…), on PostgreSQL or SQLite:
 *   npx tsx bench/guard/move.ts [--docs 26] [--kb 500] [--rounds 3] [--database-url postgres://…]
 * Fills a namespace with `--docs` documents of `--kb` KB (about 13,000 chunks by default), then
 * moves it, back and forth `--rounds` times; prints each move's status and time, the chunks
 * found in the target after it, and a search there.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { log, startServe, timed, waitProcessed } from "./serve.js";

const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    docs: { type: "string", default: "26" },
    kb: { type: "string", default: "500" },
    rounds: { type: "string", default: "3" },
  },
});
const env: Record<string, string> = {};
if (values["database-url"]) {
  const u = values["database-url"];
  env.MEMCTX_DATABASE_URL = `${u}${u.includes("?") ? "&" : "?"}schema=guard_move_${process.pid}`;
}
const words = ["harbour", "bicycle", "garden", "lantern", "orchard", "quarry", "violin", "meadow"];
const doc = (i: number) => {
  const parts: string[] = [];
  let size = 0;
  for (let k = 0; size < Number(values.kb) * 1024; k++) {
    const s = `Entry ${i}-${k}: the ${words[(i + k) % 8]} near the ${words[(i * 3 + k) % 8]} was noted on day ${k % 365}.${k % 6 === 5 ? "\n\n" : " "}`;
    parts.push(s);
    size += s.length;
  }
  return parts.join("");
};

const dir = mkdtempSync(join(tmpdir(), "guard-move-"));
const serve = await startServe(dir, env);
try {
  for (let i = 0; i < Number(values.docs); i++) {
    await timed(serve.url, "POST", "/ns/move-a/document", { content: doc(i), id: `doc-${i}` });
  }
  await waitProcessed(serve.url, "move-a", 900_000);
  const chunks = async (ns: string) =>
    (
      JSON.parse((await timed(serve.url, "POST", `/ns/${ns}/list/chunks?limit=1`, {})).text) as {
        pagination: { totalItems: number };
      }
    ).pagination.totalItems;
  log(`${values.docs} documents of ${values.kb} KB: ${await chunks("move-a")} chunks`);
  let from = "move-a";
  let to = "move-b";
  for (let r = 0; r < Number(values.rounds); r++) {
    const moved = await timed(serve.url, "DELETE", `/ns/${from}?moveTo=${to}`, undefined, 300_000);
    const found = await timed(serve.url, "POST", `/ns/${to}/search`, {
      query: "lantern orchard",
      searchMode: "chunks",
    });
    log(
      `move ${from} -> ${to}: ${moved.status} in ${moved.ms} ms ${moved.status >= 300 ? moved.text.slice(0, 200) : ""}; ` +
        `${await chunks(to)} chunks there, ${await chunks(from)} left; search there ${found.status} (${(JSON.parse(found.text) as { results?: unknown[] }).results?.length ?? 0} hits)`,
    );
    if (moved.status >= 300) break;
    [from, to] = [to, from];
  }
} finally {
  await serve.close();
  rmSync(dir, { recursive: true, force: true });
}
