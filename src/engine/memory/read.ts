import { RELATED_LIMIT_DEFAULT } from "../../api/limits.js";
import type { Memory } from "../../api/memories.js";
import type { Db } from "../store/db.js";
import { latestSourceDocument } from "../store/documents.js";
import { getMemoryRow, type MemoryRow, toMemory } from "../store/memories.js";
import { type RelationDirection, relatedMemoryRows } from "../store/memory-relations.js";

export interface ReadMemoryOptions {
  include?: readonly ("related" | "documents")[] | undefined;
  relatedLimit?: number | undefined;
}

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
export async function readMemory(
  db: Db,
  namespaceId: string,
  id: string,
  opts: ReadMemoryOptions = {},
): Promise<Memory | undefined> {
  const row = await getMemoryRow(db, namespaceId, id);
  if (!row) return undefined;
  const include = new Set(opts.include ?? []);
  const withDocument = include.has("documents");
  const memory = await present(db, row, withDocument);
  if (include.has("related")) {
    const limit = opts.relatedLimit ?? RELATED_LIMIT_DEFAULT;
    const at = new Date().toISOString();
    const walk = async (d: RelationDirection) => {
      const out: Memory[] = [];
      for (const r of await relatedMemoryRows(db, row, d, limit, at))
        out.push(await present(db, r, withDocument));
      return out;
    };
    memory.included = {
      ...memory.included,
      related: {
        parents: await walk("parents"),
        children: await walk("children"),
        siblings: await walk("siblings"),
      },
    };
  }
  return memory;
}

async function present(db: Db, row: MemoryRow, withDocument: boolean): Promise<Memory> {
  const m = toMemory(row);
  if (withDocument) {
    const doc = await latestSourceDocument(db, row.namespace_id, row.id, row.document_id);
    if (doc) m.included = { ...m.included, document: doc };
  }
  return m;
}
