import { randomBytes, timingSafeEqual } from "node:crypto";
import { UI_PATH, UI_SECURITY_HEADERS } from "./static-files.js";

/** Where the page trades the token of its opening URL for the API key. */
export const UI_SESSION_PATH = `${UI_PATH}/session`;

export type FetchHandler = (req: Request) => Promise<Response>;

export interface UiLaunch {
  /** Goes in the URL's fragment (never sent to the server by the browser, nor in a Referer). */
  token: string;
  /** Opens the page and hands it the key, once. */
  url(origin: string): string;
  /** The engine's handler with POST /ui/session in front of it. */
  wrap(next: FetchHandler): FetchHandler;
  /** True once the page has taken the key. */
  readonly used: boolean;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...UI_SECURITY_HEADERS },
  });

/**
 * `memctx ui`'s way in without typing a key: a random one-time token in the opened URL, which the
 * page exchanges for `key` at POST /ui/session. The token works once; after that, or with a
 * wrong token, the exchange answers 403. The request must come from the page's own origin and
 * name a loopback host, so another site (or a DNS-rebound name) cannot make the exchange.
 */
export function createUiLaunch(key: string): UiLaunch {
  const token = randomBytes(32).toString("base64url");
  let used = false;
  const matches = (candidate: unknown) => {
    if (typeof candidate !== "string") return false;
    const a = Buffer.from(candidate);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  return {
    token,
    url: (origin) => `${origin}${UI_PATH}#token=${token}`,
    get used() {
      return used;
    },
    wrap: (next) => async (req) => {
      const url = new URL(req.url);
      if (url.pathname !== UI_SESSION_PATH) return next(req);
      if (req.method !== "POST") return json(405, { error: "Method not allowed", details: "use POST" });
      const host = req.headers.get("host") ?? "";
      if (!/^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(host)) {
        return json(403, { error: "Forbidden", details: "the key is handed out on a loopback address only" });
      }
      const origin = req.headers.get("origin");
      if (origin !== null && origin !== `${url.protocol}//${host}`) {
        return json(403, { error: "Forbidden", details: "Origin must be the page's own origin" });
      }
      let body: unknown;
      try {
        body = await req.json();
      } catch {
        return json(400, { error: "Invalid request", details: "body: must be JSON {token: string}" });
      }
      const candidate = (body as { token?: unknown } | null)?.token;
      if (typeof candidate !== "string" || candidate === "") {
        return json(400, { error: "Invalid request", details: "token: must be a non-empty string" });
      }
      if (used || !matches(candidate)) {
        return json(403, {
          error: "Forbidden",
          details: "this link's token was already used or is wrong; run memctx ui again or enter an API key",
        });
      }
      used = true;
      return json(200, { key });
    },
  };
}
