import { findNamespace, type NamespaceRow, namespacesNamed } from "../../services/namespaces.js";
import type { Db } from "../../store/db.js";
import type { Principal } from "../../store/organizations.js";
import { assertNamespaceAllowed } from "../route.js";

/**
 * Legacy requests name their namespace in the body (`containerTag`, or the deprecated
 * `containerTags`) instead of the path. Each helper here applies the key's namespace allow-list
 * the way `route` does for a path's `{namespace}` (403 naming the namespace).
 */

/** The namespace of a legacy write that names none (v3 had no default; ours). */
export const LEGACY_DEFAULT_NAMESPACE = "default";

/** `containerTag`, else the first of `containerTags`, else the next pair given, else the default. */
export function containerTagOf(
  ...sources: (
    | { containerTag?: string | undefined; containerTags?: readonly string[] | undefined }
    | undefined
  )[]
): string {
  for (const s of sources) {
    const tag = s?.containerTag ?? s?.containerTags?.[0];
    if (tag !== undefined) return tag;
  }
  return LEGACY_DEFAULT_NAMESPACE;
}

/** An allowed namespace for reading: null when never written to (a read of it finds nothing). */
export async function readNamespace(
  db: Db,
  principal: Principal,
  name: string,
): Promise<NamespaceRow | null> {
  assertNamespaceAllowed(principal, name);
  return (await findNamespace(db, principal.organization.id, name)) ?? null;
}

/** An allowed namespace for writing, by name: its service makes it on first use. */
export function writableNamespace(principal: Principal, name: string): string {
  assertNamespaceAllowed(principal, name);
  return name;
}

/**
 * The existing namespaces a legacy read spans: those named (each must be allowed), or, when none
 * are named, every namespace of the organization that the key may use.
 */
export async function readNamespaces(
  db: Db,
  principal: Principal,
  names?: readonly string[],
): Promise<NamespaceRow[]> {
  if (names && names.length > 0) {
    for (const n of names) assertNamespaceAllowed(principal, n);
    return await namespacesNamed(db, principal.organization.id, names);
  }
  return await namespacesNamed(db, principal.organization.id, principal.namespaces);
}
