/**
 * createMcpServer: the memctx MCP server for one session. It knows only a MemoryClient and the
 * session's namespace (bound here, never a tool argument) and never reaches into the engine.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { MemoryClient, NamespaceClient } from "../client/index.js";
import { VERSION } from "../version.js";
import { describeClientError, type ErrorContext, toolErrorFrom } from "./errors.js";
import { sendPlainErrors } from "./protocol-errors.js";
import { assertOwnProfile, profileUri, registerProfileResource } from "./resources/profile.js";
import { serveLeanToolList } from "./tool-list.js";
import { isCallToolResult, type ToolContext, type ToolDefinition } from "./tools/define.js";
import { tools as allTools } from "./tools/index.js";

/** A fixed namespace, or one known later (for example from the client's roots after initialize). */
export type NamespaceSource = string | (() => string | Promise<string>);

export interface CreateMcpServerOptions {
  client: MemoryClient;
  namespace: NamespaceSource;
  /** The API's address when it is remote (MEMCTX_API_URL), for error messages; omit when embedded. */
  apiUrl?: string;
  /**
   * Whether add_memory may read a local file by path: true only for a server on the user's own
   * machine (stdio); never over HTTP, where a path would name a file of the server. Default false.
   */
  localFiles?: boolean;
  /** Only tools that do not change anything (search, get_profile, list). */
  readOnly?: boolean;
  /** How long a background watch waits for an added document's memories. Default 10 minutes. */
  dreamingWatchTimeoutMs?: number;
  /** Where bugs (errors that are not the API's answers) are reported; stdio servers use standard error. */
  log?: (message: string) => void;
}

export const DREAMING_WATCH_TIMEOUT_MS = 10 * 60_000;
/** Background watches at once per session; more adds than this are not watched. */
const MAX_WATCHES = 32;

export const SERVER_INSTRUCTIONS = [
  "memctx is the user's long-term memory.",
  "Use search (or get_profile for the big picture) before answering questions that may depend on what was said or stored earlier,",
  "and add_memory to keep facts, preferences and decisions worth remembering. Everything stays in this session's namespace.",
].join(" ");

export function createMcpServer(opts: CreateMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: "memctx", title: "memctx memory", version: VERSION },
    {
      // logging: background work (dreaming) is reported as notifications/message at the client's level.
      capabilities: { tools: {}, resources: { subscribe: true, listChanged: true }, logging: {} },
      instructions: SERVER_INSTRUCTIONS,
    },
  );
  sendPlainErrors(server.server);
  const errors: ErrorContext = { apiUrl: opts.apiUrl };
  const closed = new AbortController();
  const subscriptions = new Set<string>();
  const watches = new Set<string>();

  let nsClient: { name: string; client: NamespaceClient } | undefined;
  const namespace = async () =>
    typeof opts.namespace === "string" ? opts.namespace : await opts.namespace();
  const ns = async () => {
    const name = await namespace();
    if (nsClient?.name !== name) nsClient = { name, client: opts.client.ns(name) };
    return nsClient.client;
  };

  const profileChanged = async () => {
    const uri = profileUri(await namespace());
    if (!subscriptions.has(uri) || closed.signal.aborted) return;
    await server.server.sendResourceUpdated({ uri }).catch(() => {});
  };

  const watchDreaming = (client: NamespaceClient, documentId: string) => {
    // Only worth polling for someone who listens.
    if (subscriptions.size === 0 || closed.signal.aborted) return;
    if (watches.has(documentId) || watches.size >= MAX_WATCHES) return;
    watches.add(documentId);
    client.documents
      .waitFor(documentId, {
        until: "memories",
        signal: closed.signal,
        timeoutMs: opts.dreamingWatchTimeoutMs ?? DREAMING_WATCH_TIMEOUT_MS,
      })
      .then(
        async () => {
          await server
            .sendLoggingMessage({
              level: "info",
              logger: "memctx",
              data: `memories of document ${documentId} are ready; the profile was updated`,
            })
            .catch(() => {});
          await profileChanged();
        },
        () => {},
      )
      .finally(() => watches.delete(documentId));
  };

  const tools = opts.readOnly ? allTools.filter((t) => t.annotations.readOnlyHint) : allTools;
  for (const tool of tools)
    registerTool(server, tool, {
      namespace,
      ns,
      errors,
      profileChanged,
      watchDreaming,
      log: opts.log,
      localFiles: opts.localFiles === true,
    });
  serveLeanToolList(server, tools);

  registerProfileResource(server, { namespace, ns, errors });
  server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    assertOwnProfile(req.params.uri, await namespace());
    subscriptions.add(req.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    subscriptions.delete(req.params.uri);
    return {};
  });

  // Background watches end with the session. Chain: whoever connects may set its own onclose.
  const previous = server.server.onclose;
  server.server.onclose = () => {
    closed.abort();
    previous?.();
  };
  return server;
}

interface Session {
  namespace(): Promise<string>;
  ns(): Promise<NamespaceClient>;
  errors: ErrorContext;
  profileChanged(): Promise<void>;
  watchDreaming(client: NamespaceClient, documentId: string): void;
  log: ((message: string) => void) | undefined;
  localFiles: boolean;
}

function registerTool(server: McpServer, tool: ToolDefinition, session: Session): void {
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      annotations: tool.annotations,
    },
    async (args: unknown, extra): Promise<CallToolResult> => {
      try {
        const namespace = await session.namespace();
        const ns = await session.ns();
        let lastProgress = Number.NEGATIVE_INFINITY;
        const ctx: ToolContext = {
          namespace,
          ns,
          localFiles: session.localFiles,
          server,
          extra,
          async progress(progress, total, message) {
            const progressToken = extra._meta?.progressToken;
            // Progress must increase with each notification; repeats are dropped.
            if (progressToken === undefined || progress <= lastProgress) return;
            lastProgress = progress;
            await extra
              .sendNotification({
                method: "notifications/progress",
                params: { progressToken, progress, ...(total !== undefined ? { total } : {}), message },
              })
              .catch(() => {});
          },
          profileChanged: session.profileChanged,
          watchDreaming: (id) => session.watchDreaming(ns, id),
        };
        const out = await tool.handler(args as never, ctx);
        if (isCallToolResult(out)) return out;
        return {
          structuredContent: out.structured as Record<string, unknown>,
          content: [{ type: "text", text: out.text }],
        };
      } catch (err) {
        if (err instanceof McpError) throw err;
        if (describeClientError(err, session.errors) === undefined) {
          // A bug: reported as one (the SDK answers it as a plain error result), never as advice.
          session.log?.(
            `tool ${tool.name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
          );
          throw err;
        }
        return toolErrorFrom(err, session.errors);
      }
    },
  );
}
