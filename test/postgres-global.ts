/**
 * On the PostgreSQL pass (MEMCTX_TEST_DATABASE_URL), each test's data directory gets a schema of
 * its own (test/postgres-setup.ts), and the replicas test one per run: dropped when the run ends,
 * so that running the suite again and again against one database does not fill it. Only schemas
 * with those names that appeared during this run are dropped; what the database held before stays.
 */
import pg from "pg";

const TEST_SCHEMA = /^(memctx_[0-9a-f]{16}|replicas_\d+_\d+)$/;

async function testSchemas(client: pg.Client): Promise<Set<string>> {
  const { rows } = await client.query<{ name: string }>("SELECT nspname AS name FROM pg_namespace");
  return new Set(rows.map((r) => r.name).filter((n) => TEST_SCHEMA.test(n)));
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.MEMCTX_TEST_DATABASE_URL;
  if (!url) return undefined;
  const connect = async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  };
  const client = await connect();
  const before = await testSchemas(client).finally(() => client.end());
  return async () => {
    const client = await connect();
    try {
      const made = [...(await testSchemas(client))].filter((name) => !before.has(name));
      // A few per statement: one commit each, within the locks a transaction may hold.
      for (let i = 0; i < made.length; i += 16) {
        await client.query(
          `DROP SCHEMA ${made
            .slice(i, i + 16)
            .map((n) => `"${n}"`)
            .join(", ")} CASCADE`,
        );
      }
    } finally {
      await client.end();
    }
  };
}
