/**
 * The pgvector path of PostgreSQL (store/postgres/pgvector.ts, store/vectors.ts nearestVectors)
 * against a PostgreSQL that has the extension: PGlite (PostgreSQL compiled to WASM, an npm package
 * that ships pgvector) served on the wire protocol by @electric-sql/pglite-socket, to which memctx
 * connects with the real `pg` driver as to any server. Debian's PostgreSQL here has no pgvector.
 * Its nearest neighbours must be the SQLite path's (search/vector.ts vectorSearch, the in-process
 * scan), with the same cosines, both before the HNSW index exists (an exact ORDER BY) and through
 * it. Skipped, with the reason printed, when the PGlite server cannot start.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { vectorSearch } from "../../../src/engine/search/vector.js";
import { type Db, openDatabase, transaction } from "../../../src/engine/store/db.js";
import { insertMemories } from "../../../src/engine/store/memories.js";
import { ensureNamespace } from "../../../src/engine/store/namespaces.js";
import { ensureOrganization, LOCAL_ORGANIZATION } from "../../../src/engine/store/organizations.js";
import { indexedNearestVectors as nearestVectors } from "../../../src/engine/store/vectors.js";
import { directMemory, tempDir } from "../../support/harness.js";

const SERVER = new URL("./pglite-vector-server.mjs", import.meta.url).pathname;

async function startPglite(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [SERVER], { stdio: ["ignore", "pipe", "pipe"] });
  process.on("exit", () => child.kill("SIGKILL"));
  let out = "";
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer in 60 s: ${out}`)), 60_000);
      const read = (d: Buffer) => {
        out += d.toString();
        const m = /listening (\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      child.stdout!.on("data", read);
      child.stderr!.on("data", read);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code}: ${out.slice(0, 500)}`));
      });
    });
    return { child, port };
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
}

let server: { child: ChildProcess; port: number } | null = null;
let skipped = "";
try {
  server = await startPglite();
} catch (err) {
  skipped = `PGlite with pgvector did not start (${err instanceof Error ? err.message : String(err)})`;
  console.warn(`pgvector.test: skipped: ${skipped}`);
}

const opened: { db: Db; remove(): void }[] = [];
afterAll(async () => {
  for (const o of opened) {
    await o.db.close();
    o.remove();
  }
  server?.child.kill("SIGTERM");
});

async function open(databaseUrl?: string): Promise<Db> {
  const dir = tempDir("memctx-pgvector-");
  // PGlite's socket serves one connection at a time: a pool of one.
  if (databaseUrl) process.env.MEMCTX_PG_POOL_SIZE = "1";
  const db = await openDatabase(dir.path, databaseUrl ? { databaseUrl } : {});
  delete process.env.MEMCTX_PG_POOL_SIZE;
  opened.push({ db, remove: dir.remove });
  return db;
}

const DIMS = 24;
const MODEL = "test-model";
/** Deterministic vectors with some structure: clusters along a few directions plus noise. */
const vectorOf = (i: number) =>
  Float32Array.from(
    { length: DIMS },
    (_, k) => Math.sin((i % 7) * (k + 1)) + 0.3 * Math.cos(i * 13.7 + k * 2.1),
  );

/** Namespaces a (300 memories) and b (120), some of a's vectors of another model too. */
async function seed(db: Db): Promise<{ a: string; b: string }> {
  const org = (await ensureOrganization(db, LOCAL_ORGANIZATION)).id;
  const a = (await ensureNamespace(db, org, "a")).id;
  const b = (await ensureNamespace(db, org, "b")).id;
  const row = (namespaceId: string, i: number, model = MODEL) => ({
    ...directMemory(namespaceId, `${namespaceId === a ? "a" : "b"}-${model}-${i}`),
    vector: { model, embedding: vectorOf(namespaceId === a ? i : 1000 + i) },
  });
  await transaction(
    db,
    async () =>
      await insertMemories(db, [
        ...Array.from({ length: 300 }, (_, i) => row(a, i)),
        ...Array.from({ length: 120 }, (_, i) => row(b, i)),
        ...Array.from({ length: 40 }, (_, i) => row(a, 5000 + i, "other-model")),
      ]),
  );
  return { a, b };
}

const memoryText = async (db: Db, rowid: number) =>
  ((await db.prepare("SELECT memory FROM memories WHERE rowid = $1").get(rowid)) as { memory: string })
    .memory;

const queries = [3, 17, 42, 99, 250].map((i) => vectorOf(i * 31 + 5));

describe("nearestVectors", () => {
  it("is null on SQLite: search keeps the in-process scan there", async () => {
    const db = await open();
    const { a } = await seed(db);
    expect(await nearestVectors(db, "memories", a, MODEL, queries[0]!, 10)).toBeNull();
  });

  describe.skipIf(server === null)("on PostgreSQL with pgvector (PGlite through pglite-socket)", () => {
    it("returns the SQLite path's nearest hits, exact and through the HNSW index", async () => {
      const lite = await open();
      const liteNs = await seed(lite);
      const pg = await open(
        `postgres://postgres:postgres@127.0.0.1:${server!.port}/postgres?schema=pgvector_test`,
      );
      const pgNs = await seed(pg);
      // The vec columns exist and hold the stored bytes' values.
      const stored = (await pg
        .prepare("SELECT vec::text AS v FROM memory_vectors ORDER BY memory_rowid LIMIT 1")
        .get()) as {
        v: string;
      };
      expect(JSON.parse(stored.v)).toEqual(Array.from(vectorOf(0)).map((x) => expect.closeTo(x, 5)));

      const reference = async (q: Float32Array, ns: "a" | "b", k: number) =>
        Promise.all(
          (await vectorSearch(lite, "memories", q, MODEL, { namespaceId: liteNs[ns] }, k)).map(async (c) => ({
            memory: await memoryText(lite, c.rowid),
            cosine: c.cosine,
          })),
        );
      const viaPg = async (q: Float32Array, ns: "a" | "b", k: number) => {
        const got = await nearestVectors(pg, "memories", pgNs[ns], MODEL, q, k);
        expect(got).not.toBeNull();
        return Promise.all(
          got!.map(async (c) => ({ memory: await memoryText(pg, c.rowid), cosine: c.cosine })),
        );
      };
      const same = (
        got: { memory: string; cosine: number }[],
        want: { memory: string; cosine: number }[],
      ) => {
        expect(got.map((x) => x.memory)).toEqual(want.map((x) => x.memory));
        for (const [i, x] of got.entries()) expect(x.cosine).toBeCloseTo(want[i]!.cosine, 5);
      };

      // Inside a transaction no index is built: the exact ORDER BY.
      await transaction(pg, async () => {
        for (const q of queries) same(await viaPg(q, "a", 10), await reference(q, "a", 10));
      });
      expect(
        await pg.prepare("SELECT count(*) AS n FROM pg_indexes WHERE indexname LIKE '%hnsw%'").get(),
      ).toEqual({
        n: 0,
      });

      // Outside one, the first search builds the HNSW index of these dimensions; force its use.
      same(await viaPg(queries[0]!, "a", 10), await reference(queries[0]!, "a", 10));
      expect(
        (await pg.prepare("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%hnsw%'").all()).map(
          (r) => r.indexname,
        ),
      ).toEqual([`memory_vectors_hnsw_${DIMS}`]);
      // Search's vector step (vectorSearch) answers from pgvector on this connection: the same hits.
      for (const q of queries) {
        const got: { memory: string; cosine: number }[] = [];
        for (const c of await vectorSearch(pg, "memories", q, MODEL, { namespaceId: pgNs.a }, 10))
          got.push({ memory: await memoryText(pg, c.rowid), cosine: c.cosine });
        same(got, await reference(q, "a", 10));
      }
      await pg.exec("SET enable_seqscan = off");
      try {
        const plan = (
          await pg
            .prepare(
              // nearestVectors' statement, with literals (the partial index's predicate included).
              `EXPLAIN SELECT v.memory_rowid FROM memory_vectors v JOIN memories u ON u.rowid = v.memory_rowid
             WHERE memctx_vector.vector_dims(v.vec) = ${DIMS} AND u.namespace_id = '${pgNs.a}' AND v.model = '${MODEL}'
             ORDER BY (v.vec::memctx_vector.vector(${DIMS})) OPERATOR(memctx_vector.<=>) ('[${Array(DIMS).fill(1).join(",")}]'::memctx_vector.vector(${DIMS}))
             LIMIT 5`,
            )
            .all()
        )
          .map((r) => Object.values(r)[0])
          .join("\n");
        expect(plan).toContain(`memory_vectors_hnsw_${DIMS}`);
        for (const q of queries) {
          same(await viaPg(q, "a", 10), await reference(q, "a", 10));
          // Namespace b is the smaller part of the index: the scan goes on until it has k rows of b.
          same(await viaPg(q, "b", 5), await reference(q, "b", 5));
        }
      } finally {
        await pg.exec("RESET enable_seqscan");
      }
      // Another model's vectors are not candidates; a namespace without vectors has none.
      const other = (await nearestVectors(pg, "memories", pgNs.a, "other-model", queries[1]!, 100))!;
      expect(other).toHaveLength(40);
      expect(await nearestVectors(pg, "memories", pgNs.a, "no-such-model", queries[1]!, 10)).toEqual([]);
    });
  });
});
