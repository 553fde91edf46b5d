import type { NamespaceRecord } from "../../api/namespaces.js";
import type { EngineContext } from "../context.js";
import { type Db, newId } from "../store/db.js";
import { deleteNamespace as dropWithContents } from "../store/namespace-drop.js";
import { type NamespaceRow, setSupportingContext, toNamespaceRecord } from "../store/namespaces.js";

// Reads have no rule of their own: the store's answer as it is.
export {
  findNamespace,
  listNamespaces,
  type NamespaceRow,
  namespacesNamed,
  toNamespaceRecord,
} from "../store/namespaces.js";

/** Sets (or, with null, clears) the namespace's supporting context, making the namespace if need be. */
export async function patchNamespace(
  ctx: EngineContext,
  organizationId: string,
  name: string,
  supportingContext: string | null,
): Promise<NamespaceRecord> {
  const ns = await setSupportingContext(ctx.db, organizationId, name, supportingContext);
  return await toNamespaceRecord(ctx.db, ns);
}

/**
 * Deletes a namespace and everything in it. With `moveTo`, its content first moves to that
 * namespace of the same organization (made if need be); a moved document replaces a target
 * document with the same caller id, which goes as a delete does: with the memories only it was
 * the source of.
 */
export async function deleteNamespace(
  db: Db,
  ns: NamespaceRow,
  moveTo?: string,
): Promise<{ operationId: string; status: "done" }> {
  await dropWithContents(db, ns, moveTo);
  // Done before the answer: the operation id only names it.
  return { operationId: newId("op"), status: "done" };
}
