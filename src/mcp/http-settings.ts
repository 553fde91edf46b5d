/**
 * The Streamable HTTP server's fixed names and defaults, apart from http.ts so that `memctx mcp
 * --help` can name them without loading the SDK and the client (help must work on any Node).
 */
export const MCP_PATH = "/mcp";
export const NAMESPACE_HEADER = "x-memctx-namespace";
export const IDLE_TIMEOUT_DEFAULT_MS = 30 * 60_000;
