import type { Organization } from "../../api/namespaces.js";
import { ForbiddenError } from "../errors.js";
import type { Db } from "../store/db.js";
import {
  countNamespaces,
  getOrganization,
  type Principal,
  setOrganizationalContext,
} from "../store/organizations.js";

/** The caller's organization. A key restricted to some namespaces counts only those: the others stay unseen. */
export async function organizationOf(db: Db, principal: Principal): Promise<Organization> {
  const id = principal.organization.id;
  const org = (await getOrganization(db, id))!;
  return {
    organizationalContext: org.organizational_context,
    namespaceCount: await countNamespaces(db, id, principal.namespaces),
  };
}

/**
 * Sets (or, with null, clears) the organization's context. It guides every namespace's memories:
 * not for a key limited to some of them (403).
 */
export async function patchOrganization(
  db: Db,
  principal: Principal,
  organizationalContext: string | null,
): Promise<Organization> {
  if (principal.namespaces) {
    throw new ForbiddenError(
      "Not allowed",
      "this API key is restricted to some namespaces; changing the organization needs an unrestricted key",
    );
  }
  await setOrganizationalContext(db, principal.organization.id, organizationalContext);
  return await organizationOf(db, principal);
}
