/**
 * Typed client errors become tool results with `isError: true` and a sentence saying what to do
 * next; anything else is a bug and stays one (rethrown).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { READ_ONLY_KEY, SERVER_SETTING_MISSING } from "../api/index.js";
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  DocumentFailedError,
  InternalServerError,
  InvalidRequestError,
  MemoryApiError,
  NotFoundError,
  PayloadTooLargeError,
  PaymentRequiredError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  WaitTimeoutError,
} from "../client/index.js";
import { toolError } from "./tools/define.js";

export interface ErrorContext {
  /** Where the API lives when it is remote (MEMCTX_API_URL); undefined for the embedded engine. */
  apiUrl: string | undefined;
}

/** The server's own words for the rejection: `details` when present, else `error`. */
function reason(err: MemoryApiError): string {
  const b = err.body;
  if (b?.details) return `${b.error}: ${b.details}`;
  if (b?.error) return b.error;
  return err.message;
}

/** The sentence for a typed client error, or undefined when the error is not one (a bug). */
export function describeClientError(err: unknown, ctx: ErrorContext): string | undefined {
  if (!(err instanceof MemoryApiError)) return undefined;
  if (err instanceof InvalidRequestError) {
    return `Invalid input: ${err.message}. Fix that field and call the tool again.`;
  }
  if (err instanceof BadRequestError && err.body?.error === SERVER_SETTING_MISSING) {
    return `The memory service is not set up for this: ${err.body.details ?? err.message}. That is a setting of the server, for whoever runs it (tell the user), not a field of this call; retrying will not help.`;
  }
  if (err instanceof BadRequestError || err instanceof UnprocessableEntityError) {
    return `The memory service rejected the request (${err.status}): ${reason(err)}. Fix the named field and call the tool again.`;
  }
  if (err instanceof AuthenticationError) {
    return ctx.apiUrl
      ? `The API key was rejected (401) by ${ctx.apiUrl}. Check that MEMCTX_API_KEY is set to a valid key for that server; the user has to fix the configuration, retrying will not help.`
      : "The API key was rejected (401) by the embedded engine. Check MEMCTX_API_KEY; the user has to fix the configuration, retrying will not help.";
  }
  if (err instanceof PermissionDeniedError && err.body?.error === READ_ONLY_KEY) {
    return `Not allowed (403): this API key is read-only, so this tool cannot add, change or forget anything (${err.body.details ?? err.message}). Searching, listing and the profile still work; writing needs a key made without --read-only, which the user has to configure. Do not retry.`;
  }
  if (err instanceof PermissionDeniedError) {
    return `Not allowed (403): ${reason(err)}. This key or namespace may not do that; do not retry the same call.`;
  }
  if (err instanceof NotFoundError && /^no route for /.test(err.body?.details ?? "")) {
    return `The memory service has no endpoint for this (${err.body?.details}); it may be older than this memctx. Update the server; retrying will not help.`;
  }
  if (err instanceof NotFoundError) {
    return `Not found (404): ${reason(err)}. Check the id; the list tool shows what exists in this namespace.`;
  }
  if (err instanceof ConflictError) {
    return `Conflict (409): ${reason(err)}. Wait for the running operation to finish, then try again.`;
  }
  if (err instanceof PayloadTooLargeError) {
    return `Too large (413): ${reason(err)}. Split the content into smaller pieces and add them one by one.`;
  }
  if (err instanceof PaymentRequiredError) {
    return `The account's quota is used up (402): ${reason(err)}. The user has to raise the plan's limit; retrying will not help.`;
  }
  if (err instanceof RateLimitError) {
    const after = err.headers?.get("retry-after");
    return `Rate limited (429). Wait ${after ? `${after} seconds` : "a little"} before calling again.`;
  }
  if (err instanceof InternalServerError) {
    return `The memory service failed (${err.status}): ${reason(err)}. Try again in a moment; if it keeps failing, the server's logs say why.`;
  }
  if (err instanceof APITimeoutError) {
    return "The memory service did not answer in time. Try again; if it keeps timing out, the server may be overloaded.";
  }
  if (err instanceof APIConnectionError) {
    return ctx.apiUrl
      ? `Could not reach the memory service at ${ctx.apiUrl} (${err.message}). Is the server at MEMCTX_API_URL running? Start it (memctx serve) or fix MEMCTX_API_URL, then try again.`
      : `Could not reach the embedded engine (${err.message}). Restart the memctx MCP server.`;
  }
  if (err instanceof APIUserAbortError) return "The request was cancelled.";
  if (err instanceof DocumentFailedError) {
    return `Processing failed: ${err.document.error ?? err.message}. Check the content (for a URL: that it is reachable and public), then add it again.`;
  }
  if (err instanceof WaitTimeoutError) {
    return `${err.message}. It is still processing; search again later.`;
  }
  // InvalidResponseError and the plain base class: a contract mismatch is a bug, not the user's.
  return undefined;
}

/** The `isError` result for a typed client error; rethrows anything else. */
export function toolErrorFrom(err: unknown, ctx: ErrorContext): CallToolResult {
  const text = describeClientError(err, ctx);
  if (text === undefined) throw err;
  return toolError(text);
}
