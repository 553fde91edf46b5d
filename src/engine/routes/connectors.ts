import type { Context } from "hono";
import { endpoints } from "../../api/endpoints.js";
import { connectorService } from "../connectors/service.js";
import type { EngineContext } from "../context.js";
import { HttpError } from "../errors.js";
import { type EngineApp, type EngineEnv, route } from "./route.js";

/** The connector endpoints of the contract (behind bearer auth). */
export function connectorRoutes(app: EngineApp, ctx: EngineContext): void {
  const connectors = connectorService(ctx);
  const org = (c: Context<EngineEnv>) => c.get("principal").organization;

  route(app, endpoints.createConnector, ({ params, body }, c) =>
    connectors.create(org(c), params.namespace, body),
  );
  route(app, endpoints.listConnectors, ({ params }, c) => ({
    connectors: connectors.list(org(c), params.namespace),
  }));
  route(app, endpoints.getConnector, ({ params, query }, c) =>
    connectors.get(org(c), params.namespace, params.id, query.include ?? []),
  );
  route(app, endpoints.patchConnector, ({ params, body }, c) =>
    connectors.update(org(c), params.namespace, params.id, body),
  );
  route(app, endpoints.syncConnector, ({ params }, c) =>
    connectors.sync(org(c), params.namespace, params.id),
  );
  route(app, endpoints.deleteConnector, ({ params, query }, c) =>
    connectors.remove(org(c), params.namespace, params.id, query.deleteDocuments === true),
  );
  // A key restricted to some namespaces sees only their connectors (config names private sources).
  route(app, endpoints.listAllConnectors, (_input, c) => {
    const allowed = c.get("principal").namespaces;
    const all = connectors.list(org(c));
    return {
      connectors: allowed
        ? all.filter((x) => x.namespace !== undefined && allowed.includes(x.namespace))
        : all,
    };
  });
}

/**
 * `GET /connectors/oauth/callback?code=&state=` (engine-specific): where the OAuth provider sends
 * the user back. The user's browser carries no API key, so this is mounted BEFORE bearer auth;
 * the one-time `state` (unguessable, expires with the link) is what authorizes it.
 */
export function connectorCallbackRoute(app: EngineApp, ctx: EngineContext): void {
  app.get("/connectors/oauth/callback", async (c) => {
    const q = new URL(c.req.url).searchParams;
    try {
      const connector = await connectorService(ctx).completeAuthorization({
        state: q.get("state") ?? undefined,
        code: q.get("code") ?? undefined,
        error: q.get("error") ?? undefined,
      });
      return c.json({
        id: connector.id,
        provider: connector.provider,
        account: connector.account,
        status: "connected",
      });
    } catch (error) {
      // Answered here, so the route works wherever it is mounted (it is outside the API's auth).
      if (!(error instanceof HttpError)) throw error;
      return c.json(
        { error: error.message, ...(error.details ? { details: error.details } : {}) },
        error.status,
      );
    }
  });
}
