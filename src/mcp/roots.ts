/**
 * A stdio session without --namespace takes its namespace from the client's MCP roots: the first
 * root's folder name, slugged to the namespace rule, plus a short stable hash of its full path
 * (two checkouts named "app" stay apart), e.g. `my-repo-1a2b3c`.
 */
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { NAMESPACE_MAX_LENGTH } from "../api/index.js";

export const DEFAULT_NAMESPACE = "default";
/** How long to wait for the client's roots/list before falling back. */
export const ROOTS_TIMEOUT_MS = 5_000;

export function namespaceFromRoot(uri: string): string | undefined {
  let path: string;
  try {
    path = uri.startsWith("file:") ? fileURLToPath(uri) : new URL(uri).pathname;
  } catch {
    return undefined;
  }
  const full = path.replace(/[\\/]+$/, "");
  const name = basename(full)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^-|-$/g, "");
  const hash = createHash("sha256").update(full).digest("hex").slice(0, 6);
  const slug = name.slice(0, NAMESPACE_MAX_LENGTH - hash.length - 1);
  return slug ? `${slug}-${hash}` : `root-${hash}`;
}

/**
 * Resolves once the session is initialized: from the first root when the client lists roots,
 * else `fallback`. Bound once: a later roots change does not move a running session.
 */
export function namespaceFromRoots(server: Server, fallback = DEFAULT_NAMESPACE): () => Promise<string> {
  let resolve!: (ns: string) => void;
  const bound = new Promise<string>((r) => {
    resolve = r;
  });
  const previous = server.oninitialized;
  server.oninitialized = () => {
    previous?.();
    if (!server.getClientCapabilities()?.roots) return resolve(fallback);
    server
      .listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS })
      .then(({ roots }) => {
        const first = roots[0];
        resolve((first && namespaceFromRoot(first.uri)) ?? fallback);
      })
      .catch(() => resolve(fallback));
  };
  return () => bound;
}
