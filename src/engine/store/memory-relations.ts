import { RELATED_LIMIT_DEFAULT } from "../../api/limits.js";
import type { Db } from "./db.js";
import { getMemoryRow, isForgotten, type MemoryRow } from "./memories.js";
import { statement } from "./statements.js";

/** Which way a walk over a memory's relations goes. */
export type RelationDirection = "parents" | "children" | "siblings";

// One hop each way; a version is recorded both by parent_memory_id and by an `updates` relation.
const NEXT_SQL: Record<RelationDirection, string> = {
  parents: `SELECT parent_memory_id AS id FROM memories WHERE id = $1 AND parent_memory_id IS NOT NULL
            UNION SELECT to_id FROM memory_relations WHERE from_id = $1 AND relation = 'updates'`,
  children: `SELECT id FROM memories WHERE parent_memory_id = $1
             UNION SELECT from_id FROM memory_relations WHERE to_id = $1 AND relation = 'updates'`,
  siblings: `SELECT to_id AS id FROM memory_relations WHERE from_id = $1 AND relation IN ('extends', 'derives')
             UNION SELECT from_id FROM memory_relations WHERE to_id = $1 AND relation IN ('extends', 'derives')`,
};

/**
 * The memories related to `from` in one direction: parents (earlier versions), children (newer
 * versions) or siblings (`extends` / `derives`, either way), walked outward breadth first until
 * `limit` memories. Forgotten memories (at time `at`) are left out, but the walk goes on past them
 * (an older version behind a forgotten one is still an older version); other namespaces' memories
 * are left out and not walked through.
 */
export async function relatedMemoryRows(
  db: Db,
  from: MemoryRow,
  direction: RelationDirection,
  limit: number,
  at: string,
): Promise<MemoryRow[]> {
  const next = statement<{ id: string }>(db, NEXT_SQL[direction]);
  const seen = new Set([from.id]);
  const out: MemoryRow[] = [];
  let frontier = [from.id];
  while (frontier.length > 0 && out.length < limit) {
    const following: string[] = [];
    for (const id of frontier) {
      for (const { id: nextId } of await next.all(id)) {
        if (seen.has(nextId)) continue;
        seen.add(nextId);
        const row = await getMemoryRow(db, from.namespace_id, nextId);
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

/**
 * The versions that directly replaced each of `ids` (the `updates` relations pointing at it), read
 * through the relations' `to_id` index. Every new version records one (store/memories.ts
 * insertMemory), so following them from a superseded memory reaches its latest version.
 */
export async function newerVersionIds(db: Db, ids: readonly string[]): Promise<Map<string, string[]>> {
  const newer = new Map<string, string[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return newer;
  const rows = await statement<{ to_id: string; from_id: string }>(
    db,
    `SELECT to_id, from_id FROM memory_relations WHERE relation = 'updates' AND ${db.dialect.isIn("to_id", "$1", "text")}
     ORDER BY rowid`,
  ).all(db.dialect.list([...new Set(ids)]));
  for (const r of rows) newer.get(r.to_id)!.push(r.from_id);
  return newer;
}

/**
 * `included.related` of a search hit: the same walk as a memory read, each memory as `{id, memory}`.
 */
export async function relatedMemoryRefs(
  db: Db,
  namespaceId: string,
  id: string,
  limit = RELATED_LIMIT_DEFAULT,
): Promise<Record<RelationDirection, { id: string; memory: string }[]>> {
  const row = await getMemoryRow(db, namespaceId, id);
  const at = new Date().toISOString();
  const walk = async (d: RelationDirection) =>
    row ? (await relatedMemoryRows(db, row, d, limit, at)).map((r) => ({ id: r.id, memory: r.memory })) : [];
  return {
    parents: await walk("parents"),
    children: await walk("children"),
    siblings: await walk("siblings"),
  };
}
