import { endpoints } from "../../api/endpoints.js";
import type { Organization } from "../../api/namespaces.js";
import type { EngineContext } from "../context.js";
import { HttpError } from "../errors.js";
import type { Db } from "../store/db.js";
import { countNamespaces, getOrganization, setOrganizationalContext } from "../store/organizations.js";
import { type EngineApp, route } from "./route.js";

/** A key restricted to some namespaces counts only those: the organization's other namespaces stay unseen. */
function organization(db: Db, id: string, allowed: string[] | null): Organization {
  const org = getOrganization(db, id)!;
  return {
    organizationalContext: org.organizational_context,
    namespaceCount: countNamespaces(db, id, allowed),
  };
}

export function organizationRoutes(app: EngineApp, ctx: EngineContext): void {
  route(app, endpoints.getOrganization, (_, c) => {
    const p = c.get("principal");
    return organization(ctx.db, p.organization.id, p.namespaces);
  });
  route(app, endpoints.patchOrganization, ({ body }, c) => {
    const p = c.get("principal");
    // The shared context guides every namespace's memories: not for a key limited to some of them.
    if (p.namespaces) {
      throw new HttpError(
        403,
        "Not allowed",
        "this API key is restricted to some namespaces; changing the organization needs an unrestricted key",
      );
    }
    const id = p.organization.id;
    setOrganizationalContext(ctx.db, id, body.organizationalContext);
    return organization(ctx.db, id, null);
  });
}
