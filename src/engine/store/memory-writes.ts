import type { Metadata } from "../../api/common.js";
import type { Db } from "./connection.js";
import { namespaceTransaction, transaction } from "./db.js";
import { forgetSentences } from "./forgotten.js";
import {
  findMemory,
  insertMemory,
  isForgotten,
  type MemoryRow,
  type MemorySelector,
  memoryMetadata,
  type NewMemoryRow,
} from "./memories.js";
import { ensureNamespace } from "./namespaces.js";

/*
 * The store's operations that write memories a caller gives (legacy v4 writes and edits), each one
 * transaction. Memories drawn from documents are committed with their document (memory-commit.ts).
 */

/** A memory as a caller writes it: a NewMemoryRow of the namespace the operation makes. */
export type WrittenMemory = Omit<NewMemoryRow, "namespaceId">;

/**
 * Writes memories into a namespace (by name), in one transaction that also makes the namespace:
 * a refused write creates not even the namespace.
 */
export async function writeMemories(
  db: Db,
  organizationId: string,
  namespace: string,
  memories: readonly WrittenMemory[],
): Promise<MemoryRow[]> {
  return await transaction(db, async () => {
    const ns = await ensureNamespace(db, organizationId, namespace);
    const rows: MemoryRow[] = [];
    for (const m of memories) rows.push(await insertMemory(db, { ...m, namespaceId: ns.id }));
    return rows;
  });
}

/** What a new version of a memory changes; undefined keeps the old version's value. */
export interface MemoryEdit {
  memory: string;
  metadata?: Metadata | undefined;
  /** An ISO timestamp, or null to clear it. */
  forgetAfter?: string | null | undefined;
  forgetReason?: string | null | undefined;
  vector?: { model: string; embedding: Float32Array } | undefined;
}

/**
 * A new version of the live, latest memory `selector` names: version + 1, its parent the old one,
 * with the same subject, attribute and date; the old version's source sentence leaves its
 * document's passages as a forgotten one does (the caller's words correct it), the old version
 * stays readable as the new one's parent. Under the namespace's lock, so that two edits cannot
 * fork the chain. Nothing is written when the memory is missing, forgotten, or superseded.
 */
export async function editMemory(
  db: Db,
  namespaceId: string | null,
  selector: MemorySelector,
  edit: MemoryEdit,
): Promise<
  | { row: MemoryRow; rewritten: number[] }
  | { missing: true }
  | { forgotten: MemoryRow }
  | { superseded: MemoryRow }
> {
  if (namespaceId === null) return { missing: true };
  return await namespaceTransaction(db, namespaceId, async () => {
    const old = await findMemory(db, namespaceId, selector);
    if (!old) return { missing: true };
    if (isForgotten(old)) return { forgotten: old };
    if (old.is_latest !== 1) return { superseded: old };
    const row = await insertMemory(db, {
      namespaceId: old.namespace_id,
      memory: edit.memory,
      metadata: edit.metadata ?? memoryMetadata(old),
      isStatic: old.is_static === 1,
      isInference: false,
      subject: old.subject,
      attribute: old.attribute,
      eventDate: old.event_date,
      forgetAfter: edit.forgetAfter === undefined ? old.forget_after : edit.forgetAfter,
      forgetReason: edit.forgetReason === undefined ? old.forget_reason : edit.forgetReason,
      // The caller's words, not a document's: a re-processed document must not take this version away.
      documentId: null,
      parent: old,
      vector: edit.vector,
    });
    return { row, rewritten: await forgetSentences(db, [old.id]) };
  });
}
