import { FetchFailedError, type FetchOptions, safeFetch } from "../ingest/fetch.js";
import type { ConnectorFetch } from "./types.js";

/**
 * The fetch a sync runs with: every request goes through the ingest module's SSRF-safe safeFetch
 * (address policy after DNS and after each redirect, size and time limits), presented as a
 * web `Response` so providers read it as they would any API. An HTTP error status comes back as
 * a Response with that status (its body is safeFetch's message), a refused fetch (private address,
 * too large, too slow) throws FetchRefusedError.
 */
export interface ConnectorFetchOptions {
  allowPrivateNetwork: boolean;
  maxBytes?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export function connectorFetch(opts: ConnectorFetchOptions): ConnectorFetch {
  return async (url, init = {}) => {
    const method = (init.method ?? "GET").toUpperCase();
    if (init.body !== undefined && init.body !== null && typeof init.body !== "string") {
      throw new TypeError("connector requests send string bodies only");
    }
    const signals = [opts.signal, init.signal ?? undefined].filter((s): s is AbortSignal => s !== undefined);
    const request: FetchOptions = {
      allowPrivateNetwork: opts.allowPrivateNetwork,
      headers: plainHeaders(init.headers),
      ...(opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}),
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
      ...(method !== "GET" ? { method } : {}),
      ...(typeof init.body === "string" ? { body: init.body } : {}),
    };
    try {
      const fetched = await safeFetch(url, request);
      const body = NULL_BODY_STATUS.has(fetched.status) ? null : (fetched.body as Uint8Array<ArrayBuffer>);
      return withUrl(new Response(body, { status: fetched.status, headers: fetched.headers }), fetched.url);
    } catch (error) {
      if (error instanceof FetchFailedError && error.status !== null && error.status >= 400) {
        return withUrl(new Response(error.message, { status: error.status }), url);
      }
      throw error;
    }
  };
}

/** A constructed Response has an empty `url`; the final URL after redirects matters to callers. */
function withUrl(response: Response, url: string): Response {
  Object.defineProperty(response, "url", { value: url });
  return response;
}

function plainHeaders(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}
