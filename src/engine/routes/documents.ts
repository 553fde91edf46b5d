import { endpoints } from "../../api/endpoints.js";
import { AddDocumentFileFields } from "../../api/files.js";
import type { EngineContext } from "../context.js";
import { NotFoundError } from "../errors.js";
import { listMemories } from "../memory/read.js";
import {
  addDocuments,
  deleteDocuments,
  listChunks,
  listDocuments,
  type NewDocument,
  readDocument,
} from "../services/documents.js";
import type { Page } from "../store/pages.js";
import { storedFile } from "./multipart.js";
import { creatingRoute, type EngineApp, pagination, route } from "./route.js";

/** The engine reads the upload's file part itself; its text fields are checked by this schema. */
const addDocumentFile = { ...endpoints.addDocumentFile, body: AddDocumentFileFields };

/** What the JSON add and the upload's form both say of a document besides its content. */
interface AddFields {
  id?: string | undefined;
  metadata?: NewDocument["metadata"] | undefined;
  date?: string | undefined;
  documentDate?: string | undefined;
  supportingContext?: string | undefined;
  entityContext?: string | undefined;
  filterByMetadata?: NewDocument["filterByMetadata"] | undefined;
  taskType?: NewDocument["taskType"] | undefined;
  dreaming?: NewDocument["dreaming"] | undefined;
}

/**
 * Those fields as the store takes them: options may come in the query (spec) or the body (hosted
 * service), the body winning; the hosted service's aliases (documentDate, entityContext) count
 * when the spec's names are absent.
 */
function documentFields(
  body: AddFields,
  query: Pick<AddFields, "taskType" | "dreaming">,
): Omit<NewDocument, "content"> {
  return {
    customId: body.id,
    metadata: body.metadata,
    date: body.date ?? body.documentDate,
    supportingContext: body.supportingContext ?? body.entityContext,
    filterByMetadata: body.filterByMetadata,
    taskType: body.taskType ?? query.taskType,
    dreaming: body.dreaming ?? query.dreaming,
  };
}

export function documentRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;

  creatingRoute(app, ctx, endpoints.addDocument, async ({ organization, namespace, query, body }) => {
    const document = { content: body.content, ...documentFields(body, query) };
    // The contract lets append through only with an id.
    const append = body.append === true && body.id !== undefined;
    return (await addDocuments(ctx, organization.id, [{ namespace, document, append }]))[0];
  });

  creatingRoute(app, ctx, addDocumentFile, async ({ organization, namespace, query, body, upload }) => {
    const file = storedFile(upload!, body);
    const document = { content: "", file, title: file.name, ...documentFields(body, query) };
    return (await addDocuments(ctx, organization.id, [{ namespace, document }]))[0];
  });

  route(app, ctx, endpoints.getDocument, async ({ namespace, params, query }) => {
    const doc = namespace && (await readDocument(db, namespace.id, params.id, new Set(query.include ?? [])));
    if (!doc) throw new NotFoundError("Document");
    return doc;
  });

  route(app, ctx, endpoints.deleteDocuments, async ({ namespace, body }) => {
    if (!namespace) {
      return { count: 0, errors: body.ids.map((id) => ({ id, error: "document not found" })) };
    }
    return await deleteDocuments(db, namespace.id, body.ids);
  });

  route(app, ctx, endpoints.list, async ({ namespace, params, query, body }) => {
    const empty: Page<never> = { items: [], total: 0 };
    const out = { documents: [] as unknown[], chunks: [] as unknown[], memories: [] as unknown[] };
    let page: Page<unknown> = empty;
    if (namespace) {
      const id = namespace.id;
      if (params.type === "documents") page = await listDocuments(db, id, query, body.filter);
      else if (params.type === "chunks") page = await listChunks(db, id, query, body.filter);
      else page = await listMemories(db, id, query, body.filter, body.include?.forgotten === true);
    }
    out[params.type] = page.items;
    return { ...out, pagination: pagination(query.page, query.limit, page.total) };
  });
}
