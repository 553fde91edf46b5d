/**
 * One suite, two backends: with MEMCTX_TEST_DATABASE_URL set (`postgres://user:pass@host/db`),
 * every engine a test opens runs on PostgreSQL instead of SQLite, in a schema of its own per data
 * directory (`schema=data-dir`: each test's fresh temp directory is a fresh database, and a
 * restarted engine or a `memctx serve` child on the same directory finds its data again).
 */
const url = process.env.MEMCTX_TEST_DATABASE_URL;
if (url) {
  const u = new URL(url);
  u.searchParams.set("schema", "data-dir");
  process.env.MEMCTX_DATABASE_URL = u.toString();
}
