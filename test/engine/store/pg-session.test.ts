/**
 * What every PostgreSQL connection of memctx's pool is set up with (store/postgres/connect.ts):
 * its schema first on the search_path, and no JIT. JIT's compile of a large expression runs inside
 * LLVM, which never checks for interrupts: on this machine it ran for minutes at gigabytes, past
 * statement_timeout and pg_cancel_backend, on a deeply nested filter of a search.
 */
import { describe, expect, it } from "vitest";
import { transaction } from "../../../src/engine/store/db.js";
import { storeConnections, TEST_BACKEND } from "../../support/harness.js";

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
});
