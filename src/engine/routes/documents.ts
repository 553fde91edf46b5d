import { endpoints } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { notFound } from "../errors.js";
import { transaction } from "../store/db.js";
import {
  addDocument,
  appendToDocument,
  chunksOfDocument,
  deleteDocuments,
  findDocument,
  listChunks,
  listDocuments,
  toDocument,
} from "../store/documents.js";
import { listMemories, memoriesOfDocument } from "../store/memories.js";
import { ensureNamespace, findNamespace } from "../store/namespaces.js";
import { type Page, pagination } from "../store/pages.js";
import { type EngineApp, route } from "./route.js";

export function documentRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;

  route(app, endpoints.addDocument, ({ params, query, body }, c) => {
    const org = c.get("principal").organization;
    const result = transaction(db, () => {
      const ns = ensureNamespace(db, org.id, params.namespace);
      const doc = {
        content: body.content,
        customId: body.id,
        metadata: body.metadata,
        date: body.date ?? body.documentDate,
        supportingContext: body.supportingContext ?? body.entityContext,
        filterByMetadata: body.filterByMetadata,
        // Options may come in the query (spec) or the body (hosted service); the body wins.
        taskType: body.taskType ?? query.taskType,
        dreaming: body.dreaming ?? query.dreaming,
      };
      // The contract lets append through only with an id.
      return body.append && body.id !== undefined
        ? appendToDocument(db, ns, { ...doc, customId: body.id })
        : addDocument(db, ns, doc);
    });
    ctx.queue.wake();
    return result;
  });

  route(app, endpoints.getDocument, ({ params, query }, c) => {
    const ns = findNamespace(db, c.get("principal").organization.id, params.namespace);
    const doc = ns && findDocument(db, ns.id, params.id);
    if (!doc) throw notFound("Document");
    const include = new Set(query.include ?? []);
    return toDocument(doc, {
      chunks: include.has("chunks") ? chunksOfDocument(db, doc) : undefined,
      memories: include.has("memories") ? memoriesOfDocument(db, doc.id) : undefined,
    });
  });

  route(app, endpoints.deleteDocuments, ({ params, body }, c) => {
    const ns = findNamespace(db, c.get("principal").organization.id, params.namespace);
    if (!ns) return { count: 0, errors: body.ids.map((id) => ({ id, error: "document not found" })) };
    return deleteDocuments(db, ns.id, body.ids);
  });

  route(app, endpoints.list, ({ params, query, body }, c) => {
    const ns = findNamespace(db, c.get("principal").organization.id, params.namespace);
    const empty: Page<never> = { items: [], total: 0 };
    const out = { documents: [] as unknown[], chunks: [] as unknown[], memories: [] as unknown[] };
    let page: Page<unknown> = empty;
    if (ns) {
      if (params.type === "documents") page = listDocuments(db, ns.id, query, body.filter);
      else if (params.type === "chunks") page = listChunks(db, ns.id, query, body.filter);
      else page = listMemories(db, ns.id, query, body.filter, body.include?.forgotten === true);
    }
    out[params.type] = page.items;
    return { ...out, pagination: pagination(query.page, query.limit, page.total) };
  });
}
