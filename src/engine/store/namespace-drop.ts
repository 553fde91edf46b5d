import { type Db, transaction } from "./db.js";
import { deleteDocuments } from "./documents.js";
import {
  documentsReplacedByMove,
  dropNamespace,
  ensureNamespace,
  moveNamespaceContents,
  type NamespaceRow,
} from "./namespaces.js";

/**
 * Deletes a namespace and everything in it, in one transaction under the schema's lock (it writes
 * two namespaces, and may make one). With `moveTo`, its content first moves to that namespace of
 * the same organization (made if need be); a moved document replaces a target document with the
 * same caller id, which goes as a delete does: with the memories only it was the source of.
 */
export async function deleteNamespace(db: Db, ns: NamespaceRow, moveTo?: string): Promise<void> {
  await transaction(db, async () => {
    if (moveTo && moveTo !== ns.name) {
      const target = await ensureNamespace(db, ns.organization_id, moveTo);
      await deleteDocuments(db, target.id, await documentsReplacedByMove(db, ns.id, target.id));
      await moveNamespaceContents(db, ns.id, target.id);
    }
    await dropNamespace(db, ns.id);
  });
}
