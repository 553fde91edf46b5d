import type { EngineContext } from "./context.js";
import { QuotaExceededError } from "./errors.js";
import { documentTransaction, transaction } from "./store/db.js";
import { organizationDocumentTokens } from "./store/namespaces.js";

/**
 * Runs a write of documents in one transaction, under the organization's document token quota:
 * when the write leaves the organization over its quota, and holding more than before (replacing a
 * document with a shorter one, or deleting, is always allowed), it is rolled back and the request
 * is answered 402. Every route that adds documents for a caller goes through here. Its before and
 * after read every namespace of the organization: under a quota, document writes take the
 * schema-wide lock (routes/route.ts creatingRoute), never one namespace's.
 */
export async function withinDocumentQuota<T>(
  ctx: EngineContext,
  organizationId: string,
  write: () => Promise<T>,
): Promise<T> {
  const quota = ctx.limits?.documentTokenQuota ?? null;
  // Without a quota nothing is read across namespaces: the write's own store operations take the
  // locks they need (store/db.ts documentTransaction), not the schema-wide lock that waits for
  // every other writer.
  if (quota === null) return documentTransaction(ctx.db, null, write);
  return await transaction(ctx.db, async () => {
    const before = await organizationDocumentTokens(ctx.db, organizationId);
    const out = await write();
    const after = await organizationDocumentTokens(ctx.db, organizationId);
    if (after > quota && after > before) {
      throw new QuotaExceededError(
        "Document token limit reached",
        `the organization holds ${before} of its ${quota} document tokens and this request needs ${after - before} more; nothing was added: delete documents, or ask the operator to raise the quota`,
      );
    }
    return out;
  });
}
