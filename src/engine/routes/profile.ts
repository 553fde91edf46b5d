import { endpoints } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { bucketDefinitions, buildProfile, removeBuckets, setBuckets } from "../memory/profile.js";
import { creatingRoute, type EngineApp, route } from "./route.js";

/**
 * POST /ns/{namespace}/profile and the bucket definitions (GET/PUT/DELETE
 * /ns/{namespace}/profile/buckets). Narrowing the profile to a bucket the namespace does not have
 * is a 400 naming it; changing an organization-owned bucket through a namespace is a 403 naming it
 * (both mapped in app.ts's onError).
 */
export function profileRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;

  route(app, ctx, endpoints.getProfile, async ({ organization, namespace, body }) => ({
    profile: await buildProfile(db, organization.id, namespace?.id ?? null, body),
  }));

  route(app, ctx, endpoints.getBuckets, async ({ organization, namespace }) => ({
    buckets: await bucketDefinitions(db, organization.id, namespace?.id ?? null),
  }));

  creatingRoute(app, ctx, endpoints.putBuckets, async ({ organization, namespace, body }) => ({
    buckets: await setBuckets(ctx, organization.id, namespace, body.buckets),
  }));

  route(app, ctx, endpoints.deleteBuckets, async ({ organization, namespace, body }) => ({
    buckets: await removeBuckets(db, organization.id, namespace?.id ?? null, body.buckets),
  }));
}
