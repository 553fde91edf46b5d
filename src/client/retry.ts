/**
 * When to retry and how long to wait: 429, 5xx (not 501) and connection failures, exponential
 * backoff with jitter, `Retry-After` honoured. Whether a request may be repeated at all is the
 * caller's (core's) decision: see `isRetrySafe`.
 */
import type { EndpointName } from "../api/index.js";
import { endpoints } from "../api/index.js";
import { APIConnectionError, MemoryApiError } from "./errors.js";

export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_RETRY_BASE_MS = 500;
export const MAX_BACKOFF_MS = 8_000;
export const MAX_RETRY_AFTER_MS = 60_000;

/** Worth another attempt: the failure may be transient. */
export function isRetryable(err: unknown): boolean {
  if (err instanceof APIConnectionError) return true; // timeouts included
  if (!(err instanceof MemoryApiError) || err.status === undefined) return false;
  return err.status === 429 || (err.status >= 500 && err.status !== 501);
}

/**
 * Repeating the request cannot do anything twice: the endpoint is idempotent, an add names its
 * document `id` (an upsert), or every item of a batch has a `customId`. A forget by meaning is
 * repeated only as a dry run: otherwise a repeat forgets whatever matches by then, which may be
 * more than the first attempt forgot.
 */
export function isRetrySafe(name: EndpointName, body: unknown): boolean {
  if (name === "forgetSemantic") return (body as { dryRun?: unknown } | undefined)?.dryRun === true;
  if (name === "addDocument" || name === "addDocumentFile")
    return typeof (body as { id?: unknown } | undefined)?.id === "string";
  if (name === "legacyAddDocument" || name === "legacyAddFile")
    return typeof (body as { customId?: unknown } | undefined)?.customId === "string";
  if (name === "legacyForgetMatching") return (body as { dryRun?: unknown } | undefined)?.dryRun === true;
  if (name === "batchAdd") {
    const docs = (body as { documents?: unknown } | undefined)?.documents;
    return (
      Array.isArray(docs) &&
      docs.length > 0 &&
      docs.every((d) => typeof d === "object" && d !== null && typeof d.customId === "string")
    );
  }
  return endpoints[name].idempotent;
}

/** `Retry-After` as milliseconds (seconds or an HTTP date), capped; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

/** Delay before retry number `retry` (0-based): base * 2^retry, capped, ±25% jitter. */
export function backoffMs(retry: number, baseMs = DEFAULT_RETRY_BASE_MS, random = Math.random): number {
  const d = Math.min(baseMs * 2 ** retry, MAX_BACKOFF_MS);
  return Math.round(d * (0.75 + random() * 0.5));
}

/** The wait before the next attempt after `err`. */
export function retryDelayMs(err: unknown, retry: number, baseMs: number): number {
  const header = err instanceof MemoryApiError ? (err.headers?.get("retry-after") ?? null) : null;
  return parseRetryAfter(header) ?? backoffMs(retry, baseMs);
}
