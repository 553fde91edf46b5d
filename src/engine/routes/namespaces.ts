import { endpoints, NAMESPACES_ALIAS_PATH } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { badRequest, notFound } from "../errors.js";
import { newId } from "../store/db.js";
import {
  deleteNamespace,
  findNamespace,
  listNamespaces,
  setSupportingContext,
  toNamespaceRecord,
} from "../store/namespaces.js";
import { pagination } from "../store/pages.js";
import { assertNamespaceAllowed, type EngineApp, route } from "./route.js";

export function namespaceRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;

  for (const path of [endpoints.listNamespaces.path, NAMESPACES_ALIAS_PATH]) {
    route(
      app,
      endpoints.listNamespaces,
      ({ query }, c) => {
        const p = c.get("principal");
        const { namespaces, total } = listNamespaces(
          db,
          p.organization.id,
          query.page,
          query.limit,
          p.namespaces,
        );
        return { namespaces, pagination: pagination(query.page, query.limit, total) };
      },
      path,
    );
  }

  route(app, endpoints.getNamespace, ({ params }, c) => {
    const ns = findNamespace(db, c.get("principal").organization.id, params.namespace);
    if (!ns) throw notFound("Namespace");
    return toNamespaceRecord(db, ns);
  });

  route(app, endpoints.patchNamespace, ({ params, body }, c) => {
    const ns = setSupportingContext(
      db,
      c.get("principal").organization.id,
      params.namespace,
      body.supportingContext,
    );
    return toNamespaceRecord(db, ns);
  });

  // Body deliberately not read: moveTo comes from the query only (supplement).
  route(app, endpoints.deleteNamespace, ({ params, query }, c) => {
    const p = c.get("principal");
    if (query.moveTo === params.namespace) {
      throw badRequest("query.moveTo: must name another namespace than the one being deleted");
    }
    if (query.moveTo) assertNamespaceAllowed(p, query.moveTo);
    const ns = findNamespace(db, p.organization.id, params.namespace);
    if (!ns) throw notFound("Namespace");
    deleteNamespace(db, ns, query.moveTo);
    return { operationId: newId("op"), status: "done" };
  });
}
