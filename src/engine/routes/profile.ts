import { endpoints } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { badRequest, HttpError } from "../errors.js";
import { buildProfile, UnknownBucketError } from "../memory/profile.js";
import { transaction } from "../store/db.js";
import { ensureNamespace, findNamespace } from "../store/namespaces.js";
import {
  bucketMap,
  deleteBuckets,
  effectiveBuckets,
  OrganizationBucketError,
  putBuckets,
} from "../store/profile.js";
import { type EngineApp, route } from "./route.js";

/**
 * POST /ns/{namespace}/profile and the bucket definitions (GET/PUT/DELETE
 * /ns/{namespace}/profile/buckets). Narrowing the profile to a bucket the namespace does not have
 * is a 400 naming it; changing an organization-owned bucket through a namespace is a 403 naming it.
 */
export function profileRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;

  route(app, endpoints.getProfile, ({ params, body }, c) => {
    const org = c.get("principal").organization.id;
    const ns = findNamespace(db, org, params.namespace);
    try {
      return { profile: buildProfile(db, org, ns?.id ?? null, body) };
    } catch (err) {
      if (err instanceof UnknownBucketError) throw badRequest(err.message);
      throw err;
    }
  });

  route(app, endpoints.getBuckets, ({ params }, c) => {
    const org = c.get("principal").organization.id;
    const ns = findNamespace(db, org, params.namespace);
    return { buckets: bucketMap(effectiveBuckets(db, org, ns?.id ?? null)) };
  });

  route(app, endpoints.putBuckets, ({ params, body }, c) => {
    const org = c.get("principal").organization.id;
    // One transaction: a refused change does not even create the namespace.
    return ownedByNamespace(() =>
      transaction(db, () => {
        const ns = ensureNamespace(db, org, params.namespace);
        putBuckets(db, org, ns.id, body.buckets);
        return { buckets: bucketMap(effectiveBuckets(db, org, ns.id)) };
      }),
    );
  });

  route(app, endpoints.deleteBuckets, ({ params, body }, c) => {
    const org = c.get("principal").organization.id;
    return ownedByNamespace(() => {
      const ns = findNamespace(db, org, params.namespace);
      deleteBuckets(db, org, ns?.id ?? null, body.buckets);
      return { buckets: bucketMap(effectiveBuckets(db, org, ns?.id ?? null)) };
    });
  });
}

function ownedByNamespace<T>(change: () => T): T {
  try {
    return change();
  } catch (err) {
    if (err instanceof OrganizationBucketError) {
      throw new HttpError(403, `Bucket '${err.bucket}' is owned by the organization`, err.message);
    }
    throw err;
  }
}
