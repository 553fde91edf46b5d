/**
 * JSON-RPC errors sent with their message once. The SDK's McpError puts "MCP error <code>: " in
 * front of its message, sends that whole message, and the client's McpError puts the prefix in
 * front again: a refused resource read reached the user as "MCP error -32602: MCP error -32602:
 * ...". Every error the server sends (ours, and the SDK's own "Resource ... not found" or
 * "Invalid tools/call request") goes out without the prefix, which the client adds once.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The message of an error response without the SDK's "MCP error <code>: "; any other message as it is. */
export function withoutPrefix(message: JSONRPCMessage): JSONRPCMessage {
  if (!("error" in message)) return message;
  const { code, message: text } = message.error;
  const prefix = `MCP error ${code}: `;
  if (typeof text !== "string" || !text.startsWith(prefix)) return message;
  return { ...message, error: { ...message.error, message: text.slice(prefix.length) } };
}

/** Makes `server` send every error response's message without the prefix, on whatever transport it is connected to. */
export function sendPlainErrors(server: Server): void {
  const connect = server.connect.bind(server);
  server.connect = (transport: Transport) => {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(withoutPrefix(message), options);
    return connect(transport);
  };
}
