import type { Document } from "../../api/documents.js";
import { RELATED_LIMIT_DEFAULT } from "../../api/limits.js";
import type { Memory } from "../../api/memories.js";
import type { Db } from "../store/db.js";
import { type DocumentRow, toDocument } from "../store/documents.js";
import { isForgotten, type MemoryRow, toMemory } from "../store/memories.js";
import { getMemoryRow } from "./repository.js";

export interface ReadMemoryOptions {
  include?: readonly ("related" | "documents")[] | undefined;
  relatedLimit?: number | undefined;
}

type Direction = "parents" | "children" | "siblings";

// One hop each way; a version is recorded both by parent_memory_id and by an `updates` relation.
const NEXT_SQL: Record<Direction, string> = {
  parents: `SELECT parent_memory_id AS id FROM memories WHERE id = ?1 AND parent_memory_id IS NOT NULL
            UNION SELECT to_id FROM memory_relations WHERE from_id = ?1 AND relation = 'updates'`,
  children: `SELECT id FROM memories WHERE parent_memory_id = ?1
             UNION SELECT from_id FROM memory_relations WHERE to_id = ?1 AND relation = 'updates'`,
  siblings: `SELECT to_id AS id FROM memory_relations WHERE from_id = ?1 AND relation IN ('extends', 'derives')
             UNION SELECT from_id FROM memory_relations WHERE to_id = ?1 AND relation IN ('extends', 'derives')`,
};

/**
 * One memory of a namespace (undefined for another namespace's or an unknown id). A forgotten
 * memory, or one past its `forget_after`, is still answered, with `isForgotten: true`.
 * `related`: parents (earlier versions), children (newer versions) and siblings (`extends` /
 * `derives`, either way), each walked outward breadth first until `relatedLimit` memories; forgotten
 * memories are left out (the walk goes on past them: an older version behind a forgotten one is
 * still an older version), other namespaces' memories are left out and not walked through.
 * `documents`: `included.document`, the most recently updated source document; with both, every
 * related memory carries its own.
 */
export function readMemory(
  db: Db,
  namespaceId: string,
  id: string,
  opts: ReadMemoryOptions = {},
): Memory | undefined {
  const row = getMemoryRow(db, namespaceId, id);
  if (!row) return undefined;
  const include = new Set(opts.include ?? []);
  const withDocument = include.has("documents");
  const memory = present(db, row, withDocument);
  if (include.has("related")) {
    const limit = opts.relatedLimit ?? RELATED_LIMIT_DEFAULT;
    const at = new Date().toISOString();
    const walk = (d: Direction) =>
      relatedRows(db, row, d, limit, at).map((r) => present(db, r, withDocument));
    memory.included = {
      ...memory.included,
      related: { parents: walk("parents"), children: walk("children"), siblings: walk("siblings") },
    };
  }
  return memory;
}

/**
 * `included.related` of a search hit: the same walk as a memory read, each memory as `{id, memory}`.
 */
export function relatedMemoryRefs(
  db: Db,
  namespaceId: string,
  id: string,
  limit = RELATED_LIMIT_DEFAULT,
): Record<Direction, { id: string; memory: string }[]> {
  const row = getMemoryRow(db, namespaceId, id);
  const at = new Date().toISOString();
  const walk = (d: Direction) =>
    row ? relatedRows(db, row, d, limit, at).map((r) => ({ id: r.id, memory: r.memory })) : [];
  return { parents: walk("parents"), children: walk("children"), siblings: walk("siblings") };
}

function present(db: Db, row: MemoryRow, withDocument: boolean): Memory {
  const m = toMemory(row);
  if (withDocument) {
    const doc = latestSourceDocument(db, row);
    if (doc) m.included = { ...m.included, document: doc };
  }
  return m;
}

function relatedRows(db: Db, from: MemoryRow, direction: Direction, limit: number, at: string): MemoryRow[] {
  const next = db.prepare(NEXT_SQL[direction]);
  const load = db.prepare("SELECT * FROM memories WHERE id = ? AND namespace_id = ?");
  const seen = new Set([from.id]);
  const out: MemoryRow[] = [];
  let frontier = [from.id];
  while (frontier.length > 0 && out.length < limit) {
    const following: string[] = [];
    for (const id of frontier) {
      for (const { id: nextId } of next.all(id) as { id: string }[]) {
        if (seen.has(nextId)) continue;
        seen.add(nextId);
        const row = load.get(nextId, from.namespace_id) as MemoryRow | undefined;
        if (!row) continue;
        following.push(row.id);
        if (isForgotten(row, at)) continue;
        out.push(row);
        if (out.length >= limit) return out;
      }
    }
    frontier = following;
  }
  return out;
}

/** The most recently updated of a memory's source documents. */
export function latestSourceDocument(db: Db, m: MemoryRow): Document | undefined {
  const row = db
    .prepare(
      `SELECT d.* FROM documents d WHERE d.namespace_id = ? AND (d.id = ?
         OR d.id IN (SELECT document_id FROM memory_sources WHERE memory_id = ?))
       ORDER BY d.updated_at DESC, d.rowid DESC LIMIT 1`,
    )
    .get(m.namespace_id, m.document_id, m.id) as DocumentRow | undefined;
  return row ? toDocument(row) : undefined;
}
