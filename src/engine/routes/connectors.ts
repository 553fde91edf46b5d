import { endpoints } from "../../api/endpoints.js";
import { INVALID_TEXT_RULE, isStorableText } from "../../api/text.js";
import { connectorService } from "../connectors/service.js";
import type { EngineContext } from "../context.js";
import { InputError } from "../errors.js";
import { creatingRoute, type EngineApp, route } from "./route.js";

/** The connector endpoints of the contract (behind bearer auth). */
export function connectorRoutes(app: EngineApp, ctx: EngineContext): void {
  const connectors = connectorService(ctx);

  creatingRoute(app, ctx, endpoints.createConnector, async ({ organization, namespace, body }) =>
    connectors.create(organization.id, namespace, body),
  );
  route(app, ctx, endpoints.listConnectors, async ({ organization, namespace }) => ({
    connectors: await connectors.list(organization.id, namespace),
  }));
  route(app, ctx, endpoints.getConnector, async ({ namespace, params, query }) =>
    connectors.get(namespace, params.id, query.include ?? []),
  );
  route(app, ctx, endpoints.patchConnector, async ({ namespace, params, body }) =>
    connectors.update(namespace, params.id, body),
  );
  route(app, ctx, endpoints.syncConnector, async ({ namespace, params }) =>
    connectors.sync(namespace, params.id),
  );
  route(app, ctx, endpoints.deleteConnector, async ({ namespace, params, query }) =>
    connectors.remove(namespace, params.id, query.deleteDocuments === true),
  );
  // A key restricted to some namespaces sees only their connectors (config names private sources).
  route(app, ctx, endpoints.listAllConnectors, async ({ principal, organization }) => {
    const allowed = principal.namespaces;
    const all = await connectors.list(organization.id);
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
    for (const name of ["state", "code", "error"]) {
      const v = q.get(name);
      if (v !== null && !isStorableText(v)) throw new InputError(`query.${name}`, INVALID_TEXT_RULE);
    }
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
  });
}
