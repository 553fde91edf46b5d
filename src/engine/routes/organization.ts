import { endpoints } from "../../api/endpoints.js";
import type { Organization } from "../../api/namespaces.js";
import type { EngineContext } from "../context.js";
import { HttpError } from "../errors.js";
import type { Db } from "../store/db.js";
import { getOrganization, setOrganizationalContext } from "../store/organizations.js";
import { type EngineApp, route } from "./route.js";

function organization(db: Db, id: string): Organization {
  const org = getOrganization(db, id)!;
  const { n } = db.prepare("SELECT count(*) AS n FROM namespaces WHERE organization_id = ?").get(id) as {
    n: number;
  };
  return { organizationalContext: org.organizational_context, namespaceCount: n };
}

export function organizationRoutes(app: EngineApp, ctx: EngineContext): void {
  route(app, endpoints.getOrganization, (_, c) => organization(ctx.db, c.get("principal").organization.id));
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
    return organization(ctx.db, id);
  });
}
