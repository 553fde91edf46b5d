import { endpoints } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { search } from "../search/search.js";
import { findNamespace } from "../store/namespaces.js";
import { type EngineApp, route } from "./route.js";

/** POST /ns/{namespace}/search. `searchMode` and `limit` may also come in the query; the body wins. */
export function searchRoutes(app: EngineApp, ctx: EngineContext): void {
  route(app, endpoints.search, async ({ params, query, body }, c) => {
    const ns = findNamespace(ctx.db, c.get("principal").organization.id, params.namespace);
    return search(
      { db: ctx.db, embedder: ctx.embedder, log: ctx.log },
      // A namespace never written to has nothing to find (it is not an error to search it).
      ns?.id ?? null,
      {
        ...body,
        searchMode: body.searchMode ?? query.searchMode,
        limit: body.limit ?? query.limit,
      },
      c.req.raw.signal,
    );
  });
}
