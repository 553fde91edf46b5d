import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Agent } from "undici";
import { FILE_MAX_BYTES } from "../../api/index.js";
import { VERSION } from "../../version.js";
import { nonPublicReason } from "./address.js";

/**
 * SSRF-safe fetching of user-supplied URLs. The host is resolved once, every address is checked
 * against the address policy, and the connection is pinned to the checked addresses (so a DNS
 * answer that changes between the check and the connect cannot reach a private address).
 * Redirects are followed by hand, each hop checked the same way.
 */

export interface FetchOptions {
  /** Private, loopback and link-local targets are refused unless this is true. */
  allowPrivateNetwork: boolean;
  /** The body is cut off (and the fetch refused) above this; default FILE_MAX_BYTES. */
  maxBytes?: number;
  /** Total time for all hops and the body; default 30 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** GET by default; connectors may POST to an API. A 303 (or a 301/302 after POST) continues as GET without the body. */
  method?: string;
  body?: string | Uint8Array;
  /** Address policy; defaults to "public addresses only" (or everything with allowPrivateNetwork). For tests. */
  isAllowedAddress?: (address: string) => boolean;
  /** Host resolution; defaults to node:dns lookup of all addresses. For tests. */
  resolveHost?: (hostname: string) => Promise<LookupAddress[]>;
}

export interface FetchedResource {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  /** The Content-Type header as sent ("" when absent). */
  contentType: string;
  body: Uint8Array;
  headers: Headers;
}

/** The URL is not fetched by policy: a private target, a bad scheme, too big, too slow, too many redirects. */
export class FetchRefusedError extends Error {
  override name = "FetchRefusedError";
}

/** The fetch was attempted and failed: network error or an HTTP error status. */
export class FetchFailedError extends Error {
  override name = "FetchFailedError";
  constructor(
    message: string,
    readonly status: number | null = null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export const FETCH_TIMEOUT_MS_DEFAULT = 30_000;
export const FETCH_MAX_REDIRECTS = 5;
/** Headers that carry credentials (S3 signs with x-amz-*): dropped when a redirect leaves the origin. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|x-amz-.*|x-api-key|private-token)$/i;
/** How much of an error answer's body goes into the error message. */
const ERROR_BODY_BYTES = 2048;
const PRIVATE_NETWORK_HINT = "set MEMCTX_ALLOW_PRIVATE_NETWORK=1 to allow private network targets";

/** MEMCTX_ALLOW_PRIVATE_NETWORK=1 (or "true") lets URL fetching reach private and loopback addresses. */
export function allowPrivateNetworkFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.MEMCTX_ALLOW_PRIVATE_NETWORK?.trim().toLowerCase();
  return value === "1" || value === "true";
}

export async function safeFetch(url: string, opts: FetchOptions): Promise<FetchedResource> {
  const maxBytes = opts.maxBytes ?? FILE_MAX_BYTES;
  const timeoutMs = opts.timeoutMs ?? FETCH_TIMEOUT_MS_DEFAULT;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  const headers: Record<string, string> = {
    "user-agent": `memctx/${VERSION}`,
    accept: "text/html,application/xhtml+xml,application/pdf,text/plain,text/markdown;q=0.9,*/*;q=0.8",
    ...lowerCaseKeys(opts.headers ?? {}),
  };

  let method = (opts.method ?? "GET").toUpperCase();
  let requestBody = opts.body;
  let current = parseTarget(url);
  try {
    for (let hop = 0; ; hop++) {
      const addresses = await checkedAddresses(current, opts);
      // Loaded on the first fetch, not at start: most sessions never fetch a URL.
      const undici = await import("undici");
      const undiciFetch = undici.fetch;
      const agent = pinnedAgent(undici.Agent, addresses);
      try {
        const response = await undiciFetch(current, {
          method,
          headers,
          ...(requestBody !== undefined ? { body: requestBody } : {}),
          redirect: "manual",
          signal,
          dispatcher: agent,
        });
        const location = response.headers.get("location");
        if (isRedirect(response.status) && location !== null) {
          await response.body?.cancel();
          if (hop >= FETCH_MAX_REDIRECTS) {
            throw new FetchRefusedError(`${url}: more than ${FETCH_MAX_REDIRECTS} redirects`);
          }
          const next = parseTarget(new URL(location, current).href);
          // Credentials meant for one origin never travel to another.
          if (next.origin !== current.origin) {
            for (const name of Object.keys(headers)) {
              if (CREDENTIAL_HEADER.test(name)) delete headers[name];
            }
          }
          if (
            response.status === 303 ||
            ((response.status === 301 || response.status === 302) && method === "POST")
          ) {
            method = "GET";
            requestBody = undefined;
            delete headers["content-type"];
          }
          current = next;
          continue;
        }
        if (response.status >= 400) {
          // The start of an error body says why (an OAuth `invalid_grant`, an API's message).
          const excerpt = await readPrefix(
            response.body as ReadableStream<Uint8Array> | null,
            ERROR_BODY_BYTES,
          );
          throw new FetchFailedError(
            `${current.href} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${excerpt ? `: ${excerpt}` : ""}`,
            response.status,
          );
        }
        const declared = Number(response.headers.get("content-length") ?? Number.NaN);
        if (Number.isFinite(declared) && declared > maxBytes) {
          await response.body?.cancel();
          throw tooLarge(current.href, maxBytes);
        }
        const body = await readCapped(
          response.body as ReadableStream<Uint8Array> | null,
          maxBytes,
          current.href,
        );
        return {
          url: current.href,
          status: response.status,
          contentType: response.headers.get("content-type") ?? "",
          body,
          headers: new Headers([...response.headers]),
        };
      } finally {
        agent.destroy().catch(() => {});
      }
    }
  } catch (error) {
    if (error instanceof FetchRefusedError || error instanceof FetchFailedError) throw error;
    if (timeout.aborted) {
      throw new FetchRefusedError(`${current.href}: took longer than ${timeoutMs} ms`, { cause: error });
    }
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw new FetchFailedError(`${current.href}: ${describeNetworkError(error)}`, null, { cause: error });
  }
}

function parseTarget(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new FetchRefusedError(`not a valid URL: ${JSON.stringify(url.slice(0, 200))}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new FetchRefusedError(
      `${parsed.href}: only http and https URLs are fetched, not ${parsed.protocol}`,
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new FetchRefusedError(`${parsed.origin}: URLs with embedded credentials are not fetched`);
  }
  return parsed;
}

/** Resolves the host and checks every address; one refused address refuses the host. */
async function checkedAddresses(target: URL, opts: FetchOptions): Promise<LookupAddress[]> {
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  const family = isIP(hostname);
  let addresses: LookupAddress[];
  if (family !== 0) {
    addresses = [{ address: hostname, family }];
  } else {
    try {
      addresses = await (opts.resolveHost ?? resolveAll)(hostname);
    } catch (error) {
      throw new FetchFailedError(
        `${target.href}: cannot resolve ${hostname} (${describeNetworkError(error)})`,
        null,
        {
          cause: error,
        },
      );
    }
    if (addresses.length === 0) throw new FetchFailedError(`${target.href}: ${hostname} has no addresses`);
  }
  for (const { address } of addresses) {
    if (opts.isAllowedAddress) {
      if (!opts.isAllowedAddress(address)) {
        throw new FetchRefusedError(`${target.href}: the address ${address} is not allowed`);
      }
      continue;
    }
    if (opts.allowPrivateNetwork) continue;
    const reason = nonPublicReason(address);
    if (reason !== null) {
      const via = family === 0 ? `${hostname} resolves to ${address}, ` : `${address} is `;
      throw new FetchRefusedError(`${target.href}: refused because ${via}${reason}; ${PRIVATE_NETWORK_HINT}`);
    }
  }
  return addresses;
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return dnsLookup(hostname, { all: true, order: "verbatim" });
}

/** An agent whose connections can only go to the addresses that were checked. */
function pinnedAgent(AgentClass: typeof Agent, addresses: LookupAddress[]): Agent {
  const first = addresses[0]!;
  return new AgentClass({
    connect: {
      lookup: (_hostname, options, callback) => {
        if ((options as { all?: boolean }).all) {
          (callback as (err: null, addresses: LookupAddress[]) => void)(null, addresses);
        } else {
          callback(null, first.address, first.family);
        }
      },
    },
  });
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function tooLarge(url: string, maxBytes: number): FetchRefusedError {
  return new FetchRefusedError(`${url}: the body is larger than the limit of ${maxBytes} bytes`);
}

/** The first `maxBytes` of a body as text (the rest is cancelled); "" when it cannot be read. */
async function readPrefix(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (body === null) return "";
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      total += value.byteLength;
    }
  } catch {
    return "";
  } finally {
    await reader.cancel().catch(() => {});
  }
  const bytes = Buffer.concat(parts).subarray(0, maxBytes);
  return new TextDecoder().decode(bytes).replace(/\s+/g, " ").trim();
}

async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  url: string,
): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(url, maxBytes);
    }
    parts.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}
