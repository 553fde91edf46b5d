import { endpoints } from "../../../api/endpoints.js";
import type { EngineContext } from "../../context.js";
import { buildProfile, effectiveBuckets } from "../../memory/profile.js";
import { type EngineApp, route } from "../route.js";
import { readNamespace } from "./container-tag.js";
import { legacySearch } from "./search.js";

const texts = (refs: { memory: string }[]) => refs.map((r) => r.memory);

/**
 * POST /v4/profile: v5's profile with the facts as texts (as v4 answered them), the buckets when
 * named or asked for, and, with `q`, a legacy memory search of the same namespace. POST
 * /v4/profile/buckets: v5's effective bucket definitions as `{key, description, owner}` objects.
 */
export function legacyProfileRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;

  route(app, ctx, endpoints.legacyProfile, async ({ principal, organization, body, signal }) => {
    const ns = await readNamespace(db, principal, body.containerTag);
    const profile = await buildProfile(db, organization.id, ns?.id ?? null, {
      filter: body.filters,
      buckets: body.buckets,
    });
    const withBuckets = body.buckets !== undefined || body.include?.buckets === true;
    const searchResults =
      body.q === undefined
        ? undefined
        : await legacySearch(
            ctx,
            ns?.id ?? null,
            { q: body.q, threshold: body.threshold, filters: body.filters },
            signal,
          );
    return {
      profile: {
        static: texts(profile.static),
        dynamic: texts(profile.dynamic),
        ...(withBuckets
          ? { buckets: Object.fromEntries(Object.entries(profile.buckets).map(([k, v]) => [k, texts(v)])) }
          : {}),
      },
      ...(searchResults ? { searchResults } : {}),
    };
  });

  route(app, ctx, endpoints.legacyBuckets, async ({ principal, organization, body }) => {
    const ns = await readNamespace(db, principal, body.containerTag);
    return {
      buckets: (await effectiveBuckets(db, organization.id, ns?.id ?? null)).map((b) => ({
        key: b.name,
        description: b.description,
        owner: b.owner,
      })),
    };
  });
}
