import type { SQLOutputValue } from "node:sqlite";
import type { Db, Statement } from "./connection.js";

const caches = new WeakMap<Db, Map<string, Statement<unknown>>>();

/** Most statements kept per connection; filters make many texts, so the oldest go first. */
const CACHE_SIZE = 500;

/**
 * The connection's prepared statement for `sql`: one cache per connection, shared by every store
 * module (a search or a dreaming batch prepares the same few statements again and again). Its rows
 * are `Row`s, the columns `sql` selects, declared here by the caller that wrote it
 * (`statement<MemoryRow>(db, sql).all(...)`); not checked (connection.ts Db.prepare).
 */
export function statement<Row = Record<string, SQLOutputValue>>(db: Db, sql: string): Statement<Row> {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  // One text selects the same columns whoever prepared it: a cached statement's rows are this
  // caller's `Row` too.
  let st = cache.get(sql) as Statement<Row> | undefined;
  if (st) {
    // Most recently used last: the oldest is evicted first.
    cache.delete(sql);
  } else {
    st = db.prepare<Row>(sql);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  cache.set(sql, st);
  return st;
}

/**
 * `statement`, its rows arrays of values in column order, typed as a tuple (`[unit: number, term:
 * string]`): for reads of thousands of rows, where arrays cost a third of objects to make. A text
 * read as arrays is read only so (the cached statement keeps the setting).
 */
export function arrayStatement<Row extends readonly SQLOutputValue[]>(db: Db, sql: string): Statement<Row> {
  const st = statement<Row>(db, sql);
  st.setReturnArrays(true);
  return st;
}
