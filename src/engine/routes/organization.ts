import { endpoints } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { organizationOf, patchOrganization } from "../services/organization.js";
import { type EngineApp, route } from "./route.js";

export function organizationRoutes(app: EngineApp, ctx: EngineContext): void {
  route(
    app,
    ctx,
    endpoints.getOrganization,
    async ({ principal }) => await organizationOf(ctx.db, principal),
  );
  route(
    app,
    ctx,
    endpoints.patchOrganization,
    async ({ principal, body }) => await patchOrganization(ctx.db, principal, body.organizationalContext),
  );
}
