import type { NamespaceRecord } from "../../api/namespaces.js";
import type { EngineContext } from "../context.js";
import { type Db, documentTransaction, newId, transaction } from "../store/db.js";
import { deleteDocuments } from "../store/documents.js";
import {
  documentsReplacedByMove,
  dropNamespace,
  ensureNamespace,
  moveNamespaceContents,
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
 * Runs a write that brings its namespace into being (settings, buckets, a connector): the
 * namespace is made in the write's transaction, so a refused write creates nothing. The write
 * conflicts with others only on the rows both touch (store/db.ts documentTransaction): `write` must
 * wait on nothing but the store. Processing threads are woken after the commit, for the jobs it
 * may have queued.
 */
export async function writeInNamespace<T>(
  ctx: EngineContext,
  organizationId: string,
  name: string,
  write: (ns: NamespaceRow) => Promise<T>,
): Promise<T> {
  const out = await documentTransaction(ctx.db, null, async () => {
    const ns = await ensureNamespace(ctx.db, organizationId, name);
    return await documentTransaction(ctx.db, ns.id, async () => await write(ns));
  });
  ctx.queue.wake();
  return out;
}

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
  const ns = await writeInNamespace(
    ctx,
    organizationId,
    name,
    async (ns) => await setNamespaceSettings(ctx.db, ns, settings),
  );
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
  await transaction(db, async () => {
    if (moveTo && moveTo !== ns.name) {
      const target = await ensureNamespace(db, ns.organization_id, moveTo);
      await deleteDocuments(db, target.id, await documentsReplacedByMove(db, ns.id, target.id));
      await moveNamespaceContents(db, ns.id, target.id);
    }
    await dropNamespace(db, ns.id);
  });
  // Done before the answer: the operation id only names it.
  return { operationId: newId("op"), status: "done" };
}
