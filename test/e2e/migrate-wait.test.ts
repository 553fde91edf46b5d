import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryClient } from "../../src/client/index.js";
import { PG_SCHEMA_VERSION } from "../../src/engine/store/postgres/schema.js";
import { type LaunchedServe, launchServe, stopChild, TEST_KEY, tempDir } from "../support/harness.js";
import { until, WAIT_MS } from "../support/wait.js";

/**
 * Migrations wait, they do not time out: a `memctx serve` replica that starts while another
 * session holds the schema (a replica migrating it, an operator's lock) says so on stderr and comes
 * up once it is released, however long past its statement and lock timeouts that is. Real child
 * processes on the real PostgreSQL; runs when MEMCTX_TEST_DATABASE_URL names a database.
 */
const url = process.env.MEMCTX_TEST_DATABASE_URL;

const children: LaunchedServe[] = [];
const dirs: ReturnType<typeof tempDir>[] = [];
const sessions: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map(stopChild));
  for (const d of dirs.splice(0)) d.remove();
  await Promise.all(sessions.splice(0).map((c) => c.end().catch(() => {})));
});

/** A schema of its own (named as test/postgres-global.ts drops them after the run). */
let made = 0;
const schemaUrl = () => {
  const u = new URL(url!);
  u.searchParams.set("schema", `replicas_${process.pid}_${Date.now()}${made++}`);
  return u;
};

async function session(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  sessions.push(client);
  return client;
}

/** A replica on `databaseUrl`, its statements and lock waits limited to `timeoutMs` (as an operator sets them). */
function launch(databaseUrl: string, timeoutMs: number): LaunchedServe {
  const dir = tempDir("memctx-migrate-wait-");
  dirs.push(dir);
  const child = launchServe(
    dir.path,
    {
      MEMCTX_DATABASE_URL: databaseUrl,
      MEMCTX_SECRET_KEY: "migrate-wait-test-secret",
      MEMCTX_PG_STATEMENT_TIMEOUT_MS: String(timeoutMs),
      MEMCTX_PG_LOCK_TIMEOUT_MS: String(timeoutMs),
    },
    ["--workers", "1"],
    WAIT_MS,
  );
  children.push(child);
  return child;
}

/** What the replica has said so far; fails at once if it exited (a start that gave up). */
function alive(replica: LaunchedServe): string {
  if (replica.child.exitCode !== null) throw new Error(`the replica exited: ${replica.stdout()}`);
  return replica.stdout();
}

describe.skipIf(!url)("replicas starting while the schema is being migrated", () => {
  it("a replica started while another session holds the schema's version table waits, says so, and comes up once it is released", async () => {
    const u = schemaUrl();
    const schema = u.searchParams.get("schema")!;
    // A schema a replica has not migrated yet (version 0), its version table held by another
    // session, as a replica migrating it holds it.
    const holder = await session();
    await holder.query(
      `CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".memctx_schema (version INTEGER NOT NULL);
       INSERT INTO "${schema}".memctx_schema VALUES (0)`,
    );
    await holder.query(`BEGIN; LOCK TABLE "${schema}".memctx_schema IN ACCESS EXCLUSIVE MODE`);
    const timeoutMs = 1_000;
    const replica = launch(u.toString(), timeoutMs);
    // It says what it waits for, naming the session that holds the lock.
    const holderPid = (holder as unknown as { processID: number }).processID;
    await until(
      () => alive(replica),
      (out) => /waiting for the database schema/.test(out) && out.includes(`pid ${holderPid}`),
      "the replica to say that it waits",
    );
    // Its migration's statement has waited past twice its statement and lock timeouts: nothing
    // ended it (no fixed wait: PostgreSQL says how long it has waited).
    const observer = await session();
    await until(
      async () =>
        (
          await observer.query(
            `SELECT max(extract(epoch FROM now() - query_start) * 1000) AS ms FROM pg_stat_activity
             WHERE $1 = ANY(pg_blocking_pids(pid))`,
            [holderPid],
          )
        ).rows[0].ms as number | null,
      (ms) => ms !== null && ms > 2 * timeoutMs,
      "the migration to wait past the replica's timeouts",
    );
    expect(replica.child.exitCode).toBeNull();
    await holder.query("ROLLBACK");
    const listening = await replica.listening;
    await until(
      () => replica.stdout(),
      (out) => new RegExp(`postgres, schema ${PG_SCHEMA_VERSION}`).test(out),
      "the backend line",
    );
    expect(replica.stdout()).toContain(`the database schema "${schema}" is ready`);
    // It serves.
    const client = new MemoryClient({ baseUrl: listening, apiKey: TEST_KEY, maxRetries: 0 });
    const added = await client.ns("waited").documents.add({ content: "The user keeps bees." });
    expect(added.status).toBe("queued");
    await client.close();
  });

  it("three replicas started together on a new schema all come up on the same schema version", async () => {
    const u = schemaUrl();
    const replicas = [0, 1, 2].map(() => launch(u.toString(), 10_000));
    const urls = await Promise.all(replicas.map((r) => r.listening));
    for (const r of replicas)
      await until(
        () => r.stdout(),
        (out) => new RegExp(`postgres, schema ${PG_SCHEMA_VERSION}`).test(out),
        "the backend line",
      );
    // Each answers, and what one is told the others read.
    const clients = urls.map((baseUrl) => new MemoryClient({ baseUrl, apiKey: TEST_KEY, maxRetries: 0 }));
    const { id } = await clients[0]!.ns("together").documents.add({ content: "Ana keeps bees.", id: "bees" });
    for (const c of clients) expect((await c.ns("together").documents.get("bees")).id).toBe(id);
    await Promise.all(clients.map((c) => c.close()));
    const observer = await session();
    const version = await observer.query(
      `SELECT version FROM "${u.searchParams.get("schema")}".memctx_schema`,
    );
    expect(version.rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
  });
});
