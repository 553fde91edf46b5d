/**
 * The profile of the session's namespace as a resource: `memctx://profile/{namespace}`. The list
 * names only the session's own namespace, and reading or subscribing to another is refused.
 */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { NamespaceClient } from "../../client/index.js";
import { describeClientError, type ErrorContext } from "../errors.js";

export const PROFILE_URI_TEMPLATE = "memctx://profile/{namespace}";
export const profileUri = (namespace: string) => `memctx://profile/${encodeURIComponent(namespace)}`;

/** Refuses any profile but the session's own; answers with the URI's namespace otherwise. */
export function assertOwnProfile(uri: string, namespace: string): void {
  if (uri !== profileUri(namespace)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `${uri} is not readable in this session: it is bound to namespace ${namespace}, whose profile is ${profileUri(namespace)}.`,
    );
  }
}

export function registerProfileResource(
  server: McpServer,
  session: { namespace(): Promise<string>; ns(): Promise<NamespaceClient>; errors: ErrorContext },
): void {
  server.registerResource(
    "profile",
    new ResourceTemplate(PROFILE_URI_TEMPLATE, {
      list: async () => {
        const namespace = await session.namespace();
        return {
          resources: [
            {
              uri: profileUri(namespace),
              name: `profile-${namespace}`,
              title: `Profile of ${namespace}`,
              mimeType: "application/json",
            },
          ],
        };
      },
    }),
    {
      title: "Profile",
      description:
        "Static and dynamic facts and custom buckets of the session's namespace. Subscribe to hear when it changes.",
      mimeType: "application/json",
    },
    async (uri, _vars, extra) => {
      const namespace = await session.namespace();
      assertOwnProfile(uri.href, namespace);
      const ns = await session.ns();
      try {
        const { profile } = await ns.profile.get(undefined, { signal: extra.signal });
        return {
          contents: [
            { uri: uri.href, mimeType: "application/json", text: JSON.stringify({ namespace, profile }) },
          ],
        };
      } catch (err) {
        const text = describeClientError(err, session.errors);
        if (text === undefined) throw err;
        // The SDK answers a plain Error as an internal error carrying this sentence.
        throw new Error(text);
      }
    },
  );
}
