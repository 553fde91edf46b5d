import { endpoints } from "../../api/endpoints.js";
import type { Organization } from "../../api/namespaces.js";
import type { EngineContext } from "../context.js";
import { ForbiddenError } from "../errors.js";
import type { Db } from "../store/db.js";
import { countNamespaces, getOrganization, setOrganizationalContext } from "../store/organizations.js";
import { type EngineApp, route } from "./route.js";

/** A key restricted to some namespaces counts only those: the organization's other namespaces stay unseen. */
async function organization(db: Db, id: string, allowed: string[] | null): Promise<Organization> {
  const org = (await getOrganization(db, id))!;
  return {
    organizationalContext: org.organizational_context,
    namespaceCount: await countNamespaces(db, id, allowed),
  };
}

export function organizationRoutes(app: EngineApp, ctx: EngineContext): void {
  route(
    app,
    ctx,
    endpoints.getOrganization,
    async ({ principal }) => await organization(ctx.db, principal.organization.id, principal.namespaces),
  );
  route(app, ctx, endpoints.patchOrganization, async ({ principal, body }) => {
    // The shared context guides every namespace's memories: not for a key limited to some of them.
    if (principal.namespaces) {
      throw new ForbiddenError(
        "Not allowed",
        "this API key is restricted to some namespaces; changing the organization needs an unrestricted key",
      );
    }
    const id = principal.organization.id;
    await setOrganizationalContext(ctx.db, id, body.organizationalContext);
    return await organization(ctx.db, id, null);
  });
}
