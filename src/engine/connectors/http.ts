import { ConnectorApiError } from "./errors.js";
import type { ConnectorFetch } from "./types.js";

/** JSON calls to a source's API, with errors that say which call failed and how. */

export async function requestJson<T>(
  fetch: ConnectorFetch,
  url: string,
  init: RequestInit & { headers: Record<string, string> },
  what: string,
): Promise<{ json: T; response: Response }> {
  const response = await fetch(url, { ...init, headers: { accept: "application/json", ...init.headers } });
  if (!response.ok) {
    const text = await response.text().catch(() => "");
    throw new ConnectorApiError(
      `${what}: HTTP ${response.status}${text ? ` ${text.slice(0, 300)}` : ""}`,
      response.status,
    );
  }
  try {
    return { json: (await response.json()) as T, response };
  } catch {
    throw new ConnectorApiError(`${what}: the answer is not JSON`, response.status);
  }
}

export async function getJson<T>(
  fetch: ConnectorFetch,
  url: string,
  headers: Record<string, string>,
  what: string,
  signal?: AbortSignal,
): Promise<T> {
  return (await requestJson<T>(fetch, url, { headers, ...(signal ? { signal } : {}) }, what)).json;
}

/** The `rel="next"` target of an RFC 8288 Link header (GitHub pagination). */
export function nextLink(link: string | null): string | null {
  if (!link) return null;
  for (const part of link.split(",")) {
    const match = /<([^>]+)>\s*;.*\brel="?next"?/.exec(part);
    if (match?.[1]) return match[1];
  }
  return null;
}

/** Whether an API error is the caller's (gone, forbidden) rather than the source being down. */
export function isClientError(error: unknown): error is ConnectorApiError {
  return (
    error instanceof ConnectorApiError && error.status !== null && error.status >= 400 && error.status < 500
  );
}

export function defaultFetch(timeoutMs = 30_000): ConnectorFetch {
  return (url, init = {}) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    return globalThis.fetch(url, {
      ...init,
      signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout,
    });
  };
}
