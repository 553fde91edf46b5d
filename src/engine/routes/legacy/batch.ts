import { z } from "zod";
import { BatchAddBody, BatchDocument, type BatchResult } from "../../../api/documents.js";
import { endpoints } from "../../../api/endpoints.js";
import { describeIssues } from "../../../api/errors.js";
import { BATCH_MAX_DOCUMENTS, BATCH_MIN_DOCUMENTS } from "../../../api/limits.js";
import type { EngineContext } from "../../context.js";
import { isUrlContent } from "../../ingest/content.js";
import { addDocuments, type DocumentWrite } from "../../services/documents.js";
import { type EngineApp, route } from "../route.js";
import { containerTagOf } from "./container-tag.js";

/**
 * The contract's batch body, except that items are checked one by one below: one bad item fails
 * alone, with its own error, while the others are added.
 */
const BatchEnvelope = BatchAddBody.extend({
  documents: z
    .array(z.unknown(), { error: "documents must be an array of strings or of objects with content" })
    .min(BATCH_MIN_DOCUMENTS, `documents needs at least ${BATCH_MIN_DOCUMENTS} item`)
    .max(BATCH_MAX_DOCUMENTS, `documents takes at most ${BATCH_MAX_DOCUMENTS} items`),
});

const batchAdd = { ...endpoints.batchAdd, body: BatchEnvelope };

export function batchRoutes(app: EngineApp, ctx: EngineContext): void {
  route(app, ctx, batchAdd, async ({ principal, body }) => {
    // Each item is checked alone: a bad one is answered with its own error while the others are
    // added; those added are one write under the document token quota (402 adds none, spec).
    const results: (BatchResult | DocumentWrite)[] = [];
    for (const [i, raw] of body.documents.entries()) {
      const item = BatchDocument.safeParse(typeof raw === "string" ? { content: raw } : raw);
      const fail = (error: string, details?: string): void => {
        const r = raw as { customId?: unknown; content?: unknown } | null;
        const id = typeof r === "object" && r && typeof r.customId === "string" ? r.customId : "unknown";
        const content =
          typeof raw === "string" ? raw : typeof r?.content === "string" ? r.content : undefined;
        results.push({
          id,
          status: "error",
          error,
          ...(details ? { details } : {}),
          ...(content && isUrlContent(content) ? { url: content.trim() } : {}),
        });
      };
      if (!item.success) {
        fail("Invalid document", describeIssues(`documents.${i}`, item.error.issues));
        continue;
      }
      const d = item.data;
      if (d.content.trim() === "") {
        fail("Invalid document", `documents.${i}.content: must not be empty`);
        continue;
      }
      const namespace = containerTagOf(d, body);
      if (principal.namespaces && !principal.namespaces.includes(namespace)) {
        fail("Namespace not allowed", `this API key may not use namespace '${namespace}'`);
        continue;
      }
      const metadata = body.metadata || d.metadata ? { ...body.metadata, ...d.metadata } : undefined;
      results.push({
        namespace,
        document: {
          content: d.content,
          customId: d.customId,
          metadata,
          date: d.documentDate ?? body.documentDate,
          supportingContext: d.entityContext ?? body.entityContext,
          filterByMetadata: d.filterByMetadata ?? body.filterByMetadata,
          taskType: d.taskType ?? body.taskType,
          dreaming: d.dreaming ?? body.dreaming,
        },
      });
    }
    const writes = results.filter((r): r is DocumentWrite => "document" in r);
    const added = (await addDocuments(ctx, principal.organization.id, writes)).values();
    const answered = results.map((r): BatchResult => {
      if (!("document" in r)) return r;
      const { id, status, redacted } = added.next().value!;
      return { id, status, ...(redacted ? { redacted } : {}) };
    });
    const failed = answered.filter((r) => r.status === "error").length;
    return { results: answered, failed, success: answered.length - failed };
  });
}
