import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { installDreaming } from "../../src/engine/memory/dreamer.js";
import { ROOT, TEST_BACKEND, tempDir } from "../support/harness.js";

const NODE = join(ROOT, "node_modules/.bin/node");
const MAIN = join(ROOT, "dist/cli/main.js");
const KEY = "mk_test_export_0123456789";

async function open(dataDir: string, workers = 1): Promise<{ engine: Engine; client: MemoryClient }> {
  const engine = await openEngine({
    dataDir,
    apiKey: KEY,
    workers,
    log: () => {},
    dreamer: (ctx) => installDreaming(ctx, { debounceMs: 20, maxWaitMs: 100 }),
  });
  return { engine, client: new MemoryClient({ apiKey: KEY, fetch: engine.fetch, retryBaseMs: 10 }) };
}

// On the PostgreSQL pass the children get its URL (schema=data-dir: each --data-dir its schema).
const memctx = (...args: string[]) =>
  spawnSync(NODE, [MAIN, ...args], {
    encoding: "utf8",
    env: {
      PATH: process.env.PATH ?? "",
      ...(process.env.MEMCTX_DATABASE_URL ? { MEMCTX_DATABASE_URL: process.env.MEMCTX_DATABASE_URL } : {}),
    },
  });

/** What a user sees of a data directory: every namespace's counts, memories (forgotten too), and search answers. */
async function snapshot(client: MemoryClient) {
  const { namespaces } = await client.namespaces.list();
  const out: Record<string, unknown> = {};
  for (const { namespace, documentCount, memoryCount } of namespaces) {
    const ns = client.ns(namespace);
    const memories = await ns.memories.list({ limit: 100 }, { include: { forgotten: true } });
    const results = [];
    for (const query of ["Where does Ana live?", "tea", "deploys on Tuesday", "Bob"]) {
      const res = await ns.search({ query, searchMode: "hybrid", limit: 10 });
      results.push(res.results.map((r) => [r.id, r.similarity.toFixed(6)]));
    }
    out[namespace] = {
      documentCount,
      memoryCount,
      context: (await ns.get()).supportingContext,
      buckets: await ns.profile.buckets.get(),
      memories: memories.memories
        .map((m) => [m.id, m.memory, m.version, m.isLatest, m.isForgotten, m.parentMemoryId ?? null])
        .sort(),
      results,
    };
  }
  return out;
}

// On both backends: `memctx export` / `import` read and write MEMCTX_DATABASE_URL when it is set.
describe(`memctx export and import (${TEST_BACKEND})`, () => {
  const from = tempDir("memctx-export-from-");
  const to = tempDir("memctx-export-to-");
  const file = join(from.path, "export.jsonl");
  let before: Record<string, unknown>;

  beforeAll(async () => {
    const { engine, client } = await open(from.path);
    const homeNs = client.ns("home");
    for (const content of [
      "Ana lives in Lisbon. Ana likes green tea.",
      "user: I moved to Porto last month\nassistant: How do you like Porto?\nuser: Bob and I love it",
    ]) {
      const { id } = await homeNs.documents.add({ content, dreaming: "instant" });
      await homeNs.documents.waitFor(id, { until: "memories" });
    }
    const work = client.ns("work");
    const { id } = await work.documents.add({
      content: "Deploys happen on Tuesdays.",
      metadata: { team: "infra" },
      dreaming: "instant",
    });
    await work.documents.waitFor(id, { until: "memories" });
    const tea = (await homeNs.search({ query: "green tea", searchMode: "memories" })).results[0];
    expect(tea).toBeDefined();
    await homeNs.memories.forget([tea!.id]);
    await homeNs.update({ supportingContext: "Ana's personal notes" });
    await homeNs.profile.buckets.put({ travel: "Trips and places" });
    await client.organization.update({ organizationalContext: "A family of two" });
    before = await snapshot(client);
    // The comparison below means something only if there is something to compare.
    const home = before.home as { memories: unknown[][]; results: unknown[][]; buckets: unknown };
    expect(home.memories.length).toBeGreaterThan(2);
    expect(home.memories.some((m) => m[4] === true)).toBe(true);
    expect(home.results.flat().length).toBeGreaterThan(3);
    await client.close();
    await engine.close();
  });
  afterAll(() => {
    from.remove();
    to.remove();
  });

  it("exports to JSON Lines and imports into an empty data directory with the same counts and search results", async () => {
    const exported = memctx("export", "--data-dir", from.path, "--out", file);
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/^memctx: exported .*document 3.*memory \d+/m);
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ kind: "memctx-export", version: 1 });
    expect(lines.filter((l) => l.kind === "namespace").map((l) => l.name)).toEqual(["home", "work"]);
    expect(lines.some((l) => l.kind === "memory" && l.isForgotten === 1)).toBe(true);
    // The forgotten memory's sentence travels too: re-processed there, the document keeps it out.
    expect(
      lines.some((l) => l.kind === "forgottenSentence" && /green tea/.test(l.sentence) && l.documentId),
    ).toBe(true);

    const imported = memctx("import", file, "--data-dir", to.path);
    expect(imported.status, imported.stderr).toBe(0);
    expect(imported.stderr).toMatch(/^memctx: imported /m);

    const { engine, client } = await open(to.path, 0);
    try {
      expect(await snapshot(client)).toEqual(before);
      expect((await client.organization.get()).organizationalContext).toBe("A family of two");
    } finally {
      await client.close();
      await engine.close();
    }
  });

  // The move from one backend to the other: PostgreSQL's export read into a SQLite data directory.
  it.runIf(TEST_BACKEND === "postgres")(
    "moves memory from PostgreSQL to SQLite and back with the same answers",
    async () => {
      const sqlite = tempDir("memctx-export-sqlite-");
      const url = process.env.MEMCTX_DATABASE_URL;
      try {
        const res = spawnSync(NODE, [MAIN, "import", file, "--data-dir", sqlite.path], {
          encoding: "utf8",
          env: { PATH: process.env.PATH ?? "" },
        });
        expect(res.status, res.stderr).toBe(0);
        expect(existsSync(join(sqlite.path, "memctx.db"))).toBe(true);
        delete process.env.MEMCTX_DATABASE_URL;
        const { engine, client } = await open(sqlite.path, 0);
        try {
          expect(await snapshot(client)).toEqual(before);
        } finally {
          await client.close();
          await engine.close();
          process.env.MEMCTX_DATABASE_URL = url;
        }
        // And back: SQLite's export of it into a fresh PostgreSQL schema.
        const back = join(sqlite.path, "back.jsonl");
        const exported = spawnSync(NODE, [MAIN, "export", "--data-dir", sqlite.path, "--out", back], {
          encoding: "utf8",
          env: { PATH: process.env.PATH ?? "" },
        });
        expect(exported.status, exported.stderr).toBe(0);
        const again = tempDir("memctx-export-again-");
        try {
          const imported = memctx("import", back, "--data-dir", again.path);
          expect(imported.status, imported.stderr).toBe(0);
          const reopened = await open(again.path, 0);
          try {
            expect(await snapshot(reopened.client)).toEqual(before);
          } finally {
            await reopened.client.close();
            await reopened.engine.close();
          }
        } finally {
          again.remove();
        }
      } finally {
        process.env.MEMCTX_DATABASE_URL = url;
        sqlite.remove();
      }
    },
  );

  it("refuses to import into a namespace that has content, and writes nothing", async () => {
    const again = memctx("import", file, "--data-dir", to.path);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/namespace home already has content.*nothing was imported/);
  });

  it("export of a namespace that does not exist says so and leaves no file, partial or other", () => {
    const dir = tempDir("memctx-export-none-");
    try {
      const out = join(dir.path, "nope.jsonl");
      const res = memctx("export", "--data-dir", from.path, "--namespace", "nope", "--out", out);
      expect(res.status).toBe(1);
      expect(res.stderr).toBe(
        `memctx: namespace nope does not exist in ${TEST_BACKEND === "postgres" ? "that database" : from.path}; nothing was exported (\`memctx status\` lists the namespaces)\n`,
      );
      expect(readdirSync(dir.path)).toEqual([]);
      // An earlier file of that name is kept as it was.
      writeFileSync(out, "earlier\n");
      expect(memctx("export", "--data-dir", from.path, "--namespace", "nope", "--out", out).status).toBe(1);
      expect(readdirSync(dir.path)).toEqual(["nope.jsonl"]);
      expect(readFileSync(out, "utf8")).toBe("earlier\n");
    } finally {
      dir.remove();
    }
  });

  it("exports one namespace with --namespace and refuses a file that is not an export", async () => {
    const one = memctx("export", "--data-dir", from.path, "--namespace", "work");
    expect(one.status, one.stderr).toBe(0);
    const kinds = one.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(kinds.filter((l) => l.kind === "namespace").map((l) => l.name)).toEqual(["work"]);
    const unwritable = memctx(
      "export",
      "--data-dir",
      from.path,
      "--out",
      join(from.path, "no", "such", "dir.jsonl"),
    );
    expect(unwritable.status).toBe(1);
    expect(unwritable.stderr).toMatch(/^memctx: cannot write .*ENOENT/);
    const empty = tempDir("memctx-export-bad-");
    try {
      const bad = join(empty.path, "bad.jsonl");
      writeFileSync(bad, '{"hello":1}\n');
      const res = memctx("import", bad, "--data-dir", empty.path);
      expect(res.status).toBe(1);
      expect(res.stderr).toContain("not a memctx export header");
    } finally {
      empty.remove();
    }
  });
});
