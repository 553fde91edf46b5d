import type { Db, Statement } from "./connection.js";

const caches = new WeakMap<Db, Map<string, Statement>>();

/** Most statements kept per connection; filters make many texts, so the oldest go first. */
const CACHE_SIZE = 500;

/**
 * The connection's prepared statement for `sql`: one cache per connection, shared by every store
 * module (a search or a dreaming batch prepares the same few statements again and again).
 */
export function statement(db: Db, sql: string): Statement {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let st = cache.get(sql);
  if (st) {
    // Most recently used last: the oldest is evicted first.
    cache.delete(sql);
  } else {
    st = db.prepare(sql);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  cache.set(sql, st);
  return st;
}
