import type { NamespaceRecord } from "../../api/namespaces.js";
import type { EngineContext } from "../context.js";
import { type Db, newId } from "../store/db.js";
import { deleteNamespace as dropWithContents } from "../store/namespace-drop.js";
import {
  type NamespaceRow,
  type NamespaceSettings,
  setNamespaceSettings,
  toNamespaceRecord,
} from "../store/namespaces.js";

// Reads have no rule of their own: the store's answer as it is.
export {
  findNamespace,
  listNamespaces,
  type NamespaceRow,
  namespacesNamed,
} from "../store/namespaces.js";

/**
 * Sets (or, with null, clears) the namespace's settings that are given (supporting context,
 * secret screening), making the namespace if need be.
 */
export async function patchNamespace(
  ctx: EngineContext,
  organizationId: string,
  name: string,
  settings: NamespaceSettings,
): Promise<NamespaceRecord> {
  const ns = await setNamespaceSettings(ctx.db, organizationId, name, settings);
  return await namespaceRecord(ctx, ns);
}

/** The namespace's record, its secret screening as it applies (its own setting, else the deployment's). */
export const namespaceRecord = async (ctx: EngineContext, ns: NamespaceRow): Promise<NamespaceRecord> =>
  await toNamespaceRecord(ctx.db, ns, ctx.secretScreening);

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
