import { endpoints, NAMESPACES_ALIAS_PATH } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { InputError, NotFoundError } from "../errors.js";
import { deleteNamespace, listNamespaces, namespaceRecord, patchNamespace } from "../services/namespaces.js";
import { assertNamespaceAllowed, creatingRoute, type EngineApp, pagination, route } from "./route.js";

export function namespaceRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;

  for (const path of [endpoints.listNamespaces.path, NAMESPACES_ALIAS_PATH]) {
    route(
      app,
      ctx,
      endpoints.listNamespaces,
      async ({ principal, query }) => {
        const { namespaces, total } = await listNamespaces(
          db,
          principal.organization.id,
          query.page,
          query.limit,
          principal.namespaces,
        );
        return { namespaces, pagination: pagination(query.page, query.limit, total) };
      },
      path,
    );
  }

  route(app, ctx, endpoints.getNamespace, async ({ namespace }) => {
    if (!namespace) throw new NotFoundError("Namespace");
    return await namespaceRecord(ctx, namespace);
  });

  creatingRoute(
    app,
    ctx,
    endpoints.patchNamespace,
    async ({ organization, namespace, body }) => await patchNamespace(ctx, organization.id, namespace, body),
  );

  // Body deliberately not read: moveTo comes from the query only (supplement).
  route(app, ctx, endpoints.deleteNamespace, async ({ principal, namespace, params, query }) => {
    if (query.moveTo === params.namespace) {
      throw new InputError("query.moveTo", "must name another namespace than the one being deleted");
    }
    if (query.moveTo) assertNamespaceAllowed(principal, query.moveTo);
    if (!namespace) throw new NotFoundError("Namespace");
    return await deleteNamespace(db, namespace, query.moveTo);
  });
}
