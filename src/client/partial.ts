/**
 * Partial failures inside a 200 (batch add, document delete, forget) are data, not exceptions:
 * these helpers find the failed items so that a caller never drops them silently.
 */
import type { BatchAddResponse, BatchResult, DeleteDocumentsResponse, ForgetResponse } from "../api/index.js";

/** A failed batch item with its position in the request's `documents`, to match it to its input. */
export type FailedBatchItem = BatchResult & { index: number };

/** Items of a batch add that failed (`status: "error"` or an `error` message). */
export function failedBatchItems(res: BatchAddResponse): FailedBatchItem[] {
  return res.results.flatMap((r, index) =>
    r.status === "error" || r.error !== undefined ? [{ ...r, index }] : [],
  );
}

/** The per-id errors of a document delete or a forget. */
export function itemErrors(res: DeleteDocumentsResponse | ForgetResponse): { id: string; error: string }[] {
  return res.errors;
}

/** True when a 200 carries failed items: failed batch documents, or per-id delete / forget errors. */
export function hasPartialFailure(res: BatchAddResponse | DeleteDocumentsResponse | ForgetResponse): boolean {
  if (isBatch(res)) return res.failed > 0 || failedBatchItems(res).length > 0;
  return (res as DeleteDocumentsResponse | ForgetResponse).errors.length > 0;
}

function isBatch(res: object): res is BatchAddResponse {
  return Array.isArray((res as { results?: unknown }).results);
}
