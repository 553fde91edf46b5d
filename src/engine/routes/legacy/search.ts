import { endpoints } from "../../../api/endpoints.js";
import type { LegacySearchRequest, LegacySearchResponse } from "../../../api/legacy.js";
import { LEGACY_SEARCH_MODE_DEFAULT, LEGACY_SEARCH_THRESHOLD_DEFAULT } from "../../../api/limits.js";
import type { EngineContext } from "../../context.js";
import { search } from "../../search/search.js";
import { type EngineApp, route } from "../route.js";
import { containerTagOf, readNamespace } from "./container-tag.js";

/**
 * A legacy search as the v5 search service runs it: the legacy defaults (searchMode `memories`,
 * threshold 0.6, as the spec's mapping keeps them), `q` as the query, `filters` already typed,
 * and v4's include names. Hits are v5 hits with `updatedAt` at the top, as v4 showed it.
 */
export async function legacySearch(
  ctx: EngineContext,
  namespaceId: string | null,
  req: LegacySearchRequest,
  signal?: AbortSignal,
): Promise<LegacySearchResponse> {
  const found = await search(
    { db: ctx.db, embedder: ctx.embedder, log: ctx.log },
    namespaceId,
    {
      query: req.q,
      searchMode: req.searchMode ?? LEGACY_SEARCH_MODE_DEFAULT,
      threshold: req.threshold ?? LEGACY_SEARCH_THRESHOLD_DEFAULT,
      limit: req.limit,
      filter: req.filters,
      include: req.include && {
        documents: req.include.documents,
        related: req.include.relatedMemories,
        forgotten: req.include.forgottenMemories,
      },
      rerank: req.rerank,
      rewriteQuery: req.rewriteQuery,
    },
    signal,
  );
  const results = found.results.map((h) => ({
    ...h,
    ...(h.system ? { updatedAt: h.system.updatedAt } : {}),
  }));
  return { results, total: results.length, timing: found.searchTime };
}

/** POST /v4/search: one namespace (containerTag, or the legacy default) with the legacy defaults. */
export function legacySearchRoutes(app: EngineApp, ctx: EngineContext): void {
  route(
    app,
    ctx,
    endpoints.legacySearch,
    async ({ principal, body, signal }) =>
      await legacySearch(
        ctx,
        (await readNamespace(ctx.db, principal, containerTagOf(body)))?.id ?? null,
        body,
        signal,
      ),
  );
}
