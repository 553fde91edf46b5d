/**
 * What every PostgreSQL connection of memctx's pool is set up with (store/postgres/connect.ts):
 * its schema first on the search_path, and no JIT. JIT's compile of a large expression runs inside
 * LLVM, which never checks for interrupts: on this machine it ran for minutes at gigabytes, past
 * statement_timeout and pg_cancel_backend, on a deeply nested filter of a search.
 */
import { describe, expect, it } from "vitest";
import { StoreUnavailableError, transaction } from "../../../src/engine/store/db.js";
import { storeConnections, TEST_BACKEND } from "../../support/harness.js";
import { until } from "../../support/wait.js";

const db = storeConnections();

/** A statement PostgreSQL plans above jit_above_cost (100,000 by default). */
const COSTLY = "EXPLAIN (ANALYZE, FORMAT JSON) SELECT sum(i * 2 + 1) FROM generate_series(1, 300000) AS g(i)";

const usesJit = (plan: unknown) => JSON.stringify(plan).includes('"JIT"');

describe.skipIf(TEST_BACKEND !== "postgres")("memctx's PostgreSQL sessions", () => {
  it("compile nothing with JIT, even a statement planned above jit_above_cost", async () => {
    const conn = await db();
    const row = (await conn.prepare(COSTLY).get()) as Record<string, unknown>;
    expect(usesJit(Object.values(row)[0])).toBe(false);
    // The same statement in a session with the server's default does use JIT where the server
    // can: the check above could fail.
    const available = (await conn.prepare("SELECT pg_jit_available() AS ok").get()) as unknown as {
      ok: boolean;
    };
    if (!available.ok) return;
    const withJit = await transaction(
      conn,
      async () => {
        await conn.exec("SET LOCAL jit = on");
        return (await conn.prepare(COSTLY).get()) as Record<string, unknown>;
      },
      "read",
    );
    expect(usesJit(Object.values(withJit)[0])).toBe(true);
  });

  it("fails a transaction whose connection PostgreSQL ends with 503, and the process goes on", async () => {
    const conn = await db();
    const other = await db();
    const alive = async (pid: number) =>
      (
        (await other.prepare("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1").get(pid)) as {
          n: number;
        }
      ).n;
    const ended = transaction(conn, async () => {
      const { pid } = (await conn.prepare("SELECT pg_backend_pid() AS pid").get()) as { pid: number };
      await other.prepare("SELECT pg_terminate_backend($1)").get(pid);
      // The connection's client hears of it between two statements: an `error` event no one
      // listened to stopped the process (vitest reports it as an unhandled error).
      await until(
        () => alive(pid),
        (n) => n === 0,
      );
      await conn.prepare("SELECT 1").get();
    });
    await expect(ended).rejects.toBeInstanceOf(StoreUnavailableError);
    // The broken connection was dropped, not pooled: the next statements all get a live one.
    for (let i = 0; i < 5; i++) expect(await conn.prepare("SELECT 1 AS one").get()).toEqual({ one: 1 });
  });
});
