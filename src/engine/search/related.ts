import type { DatabaseSync } from "node:sqlite";
import type { Memory } from "../../api/memories.js";

/** A related memory is shown as `{id, memory}`. */
type MemoryRef = Memory;

/** A memory's versions and neighbours, as `included.related` shows them. */
export type RelatedMemories = {
  /** Earlier versions: what this memory updates, and further back. */
  parents: MemoryRef[];
  /** Newer versions: what updates this memory, and further on. */
  children: MemoryRef[];
  /** Memories joined to it by `extends` or `derives`, either way. */
  siblings: MemoryRef[];
};

type Direction = "parents" | "children" | "siblings";

// One hop in each direction; `parent_memory_id` and `updates` relations both record a version.
const NEXT_SQL: Record<Direction, string> = {
  parents: `SELECT parent_memory_id AS id FROM memories WHERE id = ?1 AND parent_memory_id IS NOT NULL
            UNION SELECT to_id FROM memory_relations WHERE from_id = ?1 AND relation = 'updates'`,
  children: `SELECT id FROM memories WHERE parent_memory_id = ?1
             UNION SELECT from_id FROM memory_relations WHERE to_id = ?1 AND relation = 'updates'`,
  siblings: `SELECT to_id AS id FROM memory_relations WHERE from_id = ?1 AND relation IN ('extends', 'derives')
             UNION SELECT from_id FROM memory_relations WHERE to_id = ?1 AND relation IN ('extends', 'derives')`,
};

/**
 * Walks outward from a memory in each direction (breadth first) until `limit` memories are found;
 * forgotten memories (or past `forget_after`) and memories of other namespaces are left out, and
 * the walk does not pass through them.
 */
export function relatedMemories(
  db: DatabaseSync,
  memoryId: string,
  namespaceId: string,
  limit: number,
  now = new Date().toISOString(),
): RelatedMemories {
  const visible = db.prepare(
    `SELECT id, memory FROM memories WHERE id = ? AND namespace_id = ?
       AND is_forgotten = 0 AND (forget_after IS NULL OR forget_after > ?)`,
  );
  const walk = (direction: Direction): MemoryRef[] => {
    const next = db.prepare(NEXT_SQL[direction]);
    const seen = new Set([memoryId]);
    const out: MemoryRef[] = [];
    let frontier = [memoryId];
    while (frontier.length > 0 && out.length < limit) {
      const following: string[] = [];
      for (const id of frontier) {
        for (const row of next.all(id) as { id: string }[]) {
          if (seen.has(row.id)) continue;
          seen.add(row.id);
          const m = visible.get(row.id, namespaceId, now) as { id: string; memory: string } | undefined;
          if (!m) continue;
          out.push({ id: m.id, memory: m.memory });
          following.push(m.id);
          if (out.length >= limit) return out;
        }
      }
      frontier = following;
    }
    return out;
  };
  return { parents: walk("parents"), children: walk("children"), siblings: walk("siblings") };
}
