import type { MiddlewareHandler } from "hono";
import { RateLimitedError } from "./errors.js";
import type { EngineEnv } from "./routes/route.js";

const MS_PER_MINUTE = 60_000;

/**
 * Per-key rate limiting: a token bucket per API key that holds at most `requestsPerMinute`
 * requests and refills at that rate, so a key may burst up to a minute's allowance and then goes
 * at the steady rate. A refused request is answered 429 with `Retry-After` (whole seconds until a
 * request is allowed again) before any route runs, so it changes nothing. The buckets live in this
 * process: each replica of `memctx serve` counts its own requests.
 */
export function rateLimit(
  requestsPerMinute: number,
  now: () => number = Date.now,
): MiddlewareHandler<EngineEnv> {
  const perMs = requestsPerMinute / MS_PER_MINUTE;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return async (c, next) => {
    const key = c.get("principal").keyId;
    const t = now();
    const bucket = buckets.get(key) ?? { tokens: requestsPerMinute, at: t };
    bucket.tokens = Math.min(requestsPerMinute, bucket.tokens + (t - bucket.at) * perMs);
    bucket.at = t;
    buckets.set(key, bucket);
    if (bucket.tokens < 1) {
      const seconds = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
      throw new RateLimitedError(
        seconds,
        `this API key may make ${requestsPerMinute} requests per minute; try again in ${seconds} s`,
      );
    }
    bucket.tokens -= 1;
    await next();
  };
}
