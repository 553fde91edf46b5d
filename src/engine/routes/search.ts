import { endpoints } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { search } from "../search/search.js";
import { type EngineApp, route } from "./route.js";

/** POST /ns/{namespace}/search. `searchMode` and `limit` may also come in the query; the body wins. */
export function searchRoutes(app: EngineApp, ctx: EngineContext): void {
  route(
    app,
    ctx,
    endpoints.search,
    async ({ namespace, query, body, signal }) =>
      await search(
        { db: ctx.db, embedder: ctx.embedder, log: ctx.log },
        // A namespace never written to has nothing to find (it is not an error to search it).
        namespace?.id ?? null,
        {
          ...body,
          searchMode: body.searchMode ?? query.searchMode,
          limit: body.limit ?? query.limit,
        },
        signal,
      ),
  );
}
