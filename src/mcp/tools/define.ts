/**
 * One tool = one `defineTool({...})` in its own file: name, title, a description written for a
 * model, zod input and output schemas, honest annotations and a handler. The server registers
 * them in a loop and turns typed client errors into `isError` results (see ../errors.ts).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { NamespaceClient } from "../../client/index.js";

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a handler may use besides its arguments: the bound namespace and the session's server. */
export interface ToolContext {
  /** The session's namespace (bound at start or at initialize; never a tool argument). */
  namespace: string;
  /** The client of the session's namespace. */
  ns: NamespaceClient;
  /** Whether tools may read files by path: only a server on the user's own machine (stdio). */
  localFiles: boolean;
  /** The MCP server of this session: elicitation, client capabilities. */
  server: McpServer;
  extra: ToolExtra;
  /** Sends notifications/progress when the caller asked for it (a progressToken); otherwise nothing. */
  progress(progress: number, total: number | undefined, message: string): Promise<void>;
  /** Tells subscribers of the profile resource that it changed. */
  profileChanged(): Promise<void>;
  /** Watches a document in the background until its memories are ready, then tells subscribers. */
  watchDreaming(documentId: string): void;
}

/** A handler's answer: the structured result and its rendering for a reader. */
export interface ToolOutput<O> {
  structured: O;
  text: string;
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  annotations: ToolAnnotations;
  handler(args: z.output<I>, ctx: ToolContext): Promise<ToolOutput<z.input<O>> | CallToolResult>;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  def: ToolDefinition<I, O>,
): ToolDefinition<I, O> {
  return def;
}

/** A result the model can act on, with `isError: true`: a sentence saying what to do next. */
export function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

export function isCallToolResult(v: unknown): v is CallToolResult {
  return typeof v === "object" && v !== null && "content" in v;
}
