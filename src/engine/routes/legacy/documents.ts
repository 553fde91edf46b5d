import type { Document } from "../../../api/documents.js";
import { endpoints } from "../../../api/endpoints.js";
import type { LegacyDocument } from "../../../api/legacy.js";
import type { EngineContext } from "../../context.js";
import { ConflictError, NotFoundError } from "../../errors.js";
import {
  addDocuments,
  chunksOfDocument,
  deleteDocuments,
  deleteDocumentsIn,
  documentRecord,
  findDocumentsIn,
  listDocuments,
  type RecordRow,
} from "../../services/documents.js";
import type { NamespaceRow } from "../../services/namespaces.js";
import { type EngineApp, pagination, route } from "../route.js";
import { containerTagOf, readNamespaces, writableNamespace } from "./container-tag.js";

/** A v5 document as v3 showed it: lifecycle fields also at the top, and its namespace as a container tag. */
export function toLegacyDocument(doc: Document, namespace: string): LegacyDocument {
  return {
    ...doc,
    status: doc.system.status,
    dreamingStatus: doc.system.dreamingStatus,
    createdAt: doc.system.createdAt,
    updatedAt: doc.system.updatedAt,
    containerTags: [namespace],
  };
}

/**
 * The one document an id names among the namespaces the key may use. v3 paths name no namespace:
 * a caller id used in several of them is a 409 (the service id is unique).
 */
function documentById(
  namespaces: NamespaceRow[],
  rows: RecordRow[],
  id: string,
): { row: RecordRow; namespace: NamespaceRow } {
  if (rows.length === 0) throw new NotFoundError("Document");
  if (rows.length > 1) {
    throw new ConflictError(
      "Ambiguous document id",
      `customId '${id}' is used in ${rows.length} namespaces; use the document's service id`,
    );
  }
  const row = rows[0]!;
  return { row, namespace: namespaces.find((n) => n.id === row.namespace_id)! };
}

/**
 * v3 documents: POST /v3/documents (the v5 add, with containerTag as the namespace and customId as
 * the id), GET /v3/documents/{id} and /chunks (the v5 read), POST /v3/documents/list (the v5
 * list over one or several namespaces, pagination in the body), DELETE /v3/documents/{id} and
 * /bulk (the v5 delete).
 */
export function legacyDocumentRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;
  const find = async (principal: Parameters<typeof readNamespaces>[1], id: string) => {
    const namespaces = await readNamespaces(db, principal);
    const rows = await findDocumentsIn(
      db,
      namespaces.map((n) => n.id),
      id,
    );
    return { namespaces, rows };
  };

  route(app, ctx, endpoints.legacyAddDocument, async ({ principal, body }) => {
    const [added] = await addDocuments(ctx, principal.organization.id, [
      {
        namespace: writableNamespace(principal, containerTagOf(body)),
        document: {
          content: body.content,
          customId: body.customId,
          metadata: body.metadata,
          date: body.documentDate,
          supportingContext: body.entityContext,
          filterByMetadata: body.filterByMetadata,
          taskType: body.taskType,
          dreaming: body.dreaming,
        },
      },
    ]);
    return added;
  });

  route(app, ctx, endpoints.legacyListDocuments, async ({ principal, body }) => {
    const namespaces = await readNamespaces(db, principal, body.containerTags);
    const names = new Map(namespaces.map((n) => [n.id, n.name]));
    const page = namespaces.length
      ? await listDocuments(
          db,
          namespaces.map((n) => n.id),
          body,
          body.filters,
        )
      : { items: [], total: 0 };
    const memories = await Promise.all(
      page.items.map(async (d) => {
        const [row] = await findDocumentsIn(db, [...names.keys()], d.id);
        const doc = toLegacyDocument(d, names.get(row?.namespace_id ?? "") ?? "");
        if (!body.includeContent) delete doc.content;
        return doc;
      }),
    );
    return { memories, pagination: pagination(body.page, body.limit, page.total) };
  });

  // Before DELETE /v3/documents/{id}: "bulk" is this route, not a document id.
  route(app, ctx, endpoints.legacyBulkDeleteDocuments, async ({ principal, body }) => {
    const allowed = (await readNamespaces(db, principal)).map((n) => n.id);
    const { count: deletedCount, errors } = await deleteDocumentsIn(db, allowed, body.ids);
    return { success: errors.length === 0, deletedCount, ...(errors.length ? { errors } : {}) };
  });

  route(app, ctx, endpoints.legacyGetDocument, async ({ principal, params }) => {
    const { namespaces, rows } = await find(principal, params.id);
    const { row, namespace } = documentById(namespaces, rows, params.id);
    return toLegacyDocument(await documentRecord(db, row), namespace.name);
  });

  route(app, ctx, endpoints.legacyDocumentChunks, async ({ principal, params }) => {
    const { namespaces, rows } = await find(principal, params.id);
    const { row } = documentById(namespaces, rows, params.id);
    const chunks = (await chunksOfDocument(db, row)).map((c) => ({
      id: c.id,
      position: c.position,
      content: c.content,
      type: c.type,
      ...(c.metadata ? { metadata: c.metadata } : {}),
      createdAt: c.system.createdAt,
    }));
    return { documentId: row.id, chunks, total: chunks.length };
  });

  route(app, ctx, endpoints.legacyDeleteDocument, async ({ principal, params }) => {
    const { namespaces, rows } = await find(principal, params.id);
    const { row } = documentById(namespaces, rows, params.id);
    await deleteDocuments(db, row.namespace_id, [row.id]);
    return { id: row.id, deleted: true as const };
  });
}
