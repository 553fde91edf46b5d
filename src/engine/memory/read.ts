import { RELATED_LIMIT_DEFAULT } from "../../api/limits.js";
import type { Memory } from "../../api/memories.js";
import { NotFoundError } from "../errors.js";
import type { Db } from "../store/db.js";
import { latestSourceDocument } from "../store/documents.js";
import {
  findMemory,
  getMemoryRow,
  getMemoryRowIn,
  isForgotten,
  type MemoryRow,
  type MemorySelector,
  memoryRelationRows,
  memorySourceDocumentIds,
  toMemory,
} from "../store/memories.js";
import { type RelationDirection, relatedMemoryRows } from "../store/memory-relations.js";

// A page of memories has no rule above the store's (a list never shows earlier versions).
export { listMemories } from "../store/memories.js";

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

export type { MemorySelector };

/** The memory a selector names in this namespace; 404 when there is none. */
export async function selectMemory(
  db: Db,
  namespaceId: string | null,
  s: MemorySelector,
): Promise<MemoryRow> {
  const row = namespaceId ? await findMemory(db, namespaceId, s) : undefined;
  if (!row) throw new NotFoundError("Memory");
  return row;
}

/** Those of `ids` that are memories of the namespace, not forgotten (nor past forget_after) at `at`. */
export async function liveMemoriesOf(
  db: Db,
  namespaceId: string,
  ids: readonly string[],
  at = new Date().toISOString(),
): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  for (const id of new Set(ids)) {
    const r = await getMemoryRow(db, namespaceId, id);
    if (r !== undefined && !isForgotten(r, at)) rows.push(r);
  }
  return rows;
}

/**
 * Where a memory of one of these namespaces comes from and what it is tied to, as the v4 list
 * shows it: its earlier versions (up to `historyLimit`), the live memories it has a relation with,
 * and its source documents.
 */
export async function memoryLineage(
  db: Db,
  namespaceIds: readonly string[],
  memoryId: string,
  historyLimit: number,
): Promise<{
  history: Memory[];
  memoryRelations: { id: string; memory: string; relation: string }[];
  documentIds: string[];
}> {
  const row = (await getMemoryRowIn(db, namespaceIds, memoryId))!;
  const history =
    (await readMemory(db, row.namespace_id, row.id, { include: ["related"], relatedLimit: historyLimit }))
      ?.included?.related?.parents ?? [];
  const at = new Date().toISOString();
  const memoryRelations: { id: string; memory: string; relation: string }[] = [];
  for (const r of await memoryRelationRows(db, row.id)) {
    const other = await getMemoryRow(db, row.namespace_id, r.id);
    if (other && !isForgotten(other, at))
      memoryRelations.push({ id: other.id, memory: other.memory, relation: r.relation });
  }
  return { history, memoryRelations, documentIds: await memorySourceDocumentIds(db, row.id) };
}
