import { endpoints } from "../../api/endpoints.js";
import type { Organization } from "../../api/namespaces.js";
import type { EngineContext } from "../context.js";
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
    const id = c.get("principal").organization.id;
    setOrganizationalContext(ctx.db, id, body.organizationalContext);
    return organization(ctx.db, id);
  });
}
