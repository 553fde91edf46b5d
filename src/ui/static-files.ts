import { readFileSync } from "node:fs";
import type { Env, Hono, MiddlewareHandler } from "hono";
import { FROM_SOURCE, packageUrl } from "../package-root.js";

/**
 * The memory browser's static files (`src/ui/static/`, copied beside this module by the build),
 * served at /ui without an API key: the page holds no data, it asks the v5 API with the user's key.
 */
export const UI_PATH = "/ui";

/** Where the build copies them (dist/ui/static/, also for the bundled command), or the sources. */
const STATIC_DIR = packageUrl(FROM_SOURCE ? "src/ui/static/" : "dist/ui/static/");

/** Every file the page has, by name: nothing else under /ui is ever read from disk. */
const FILES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "api.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
};

/**
 * Same origin only, no inline script or style, no framing: memories hold user text, and the key
 * sits in the tab's session storage, so nothing foreign may run in or embed this page.
 */
export const UI_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export const UI_SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": UI_CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

const cache = new Map<string, Buffer>();
function read(name: string): Buffer {
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(new URL(name, STATIC_DIR));
    cache.set(name, body);
  }
  return body;
}

/** Registers GET /ui (the page) and GET /ui/<file>; registered before bearer auth. */
export function uiRoutes<E extends Env>(app: Hono<E>): void {
  const headers: MiddlewareHandler = async (c, next) => {
    await next();
    for (const [k, v] of Object.entries(UI_SECURITY_HEADERS)) c.res.headers.set(k, v);
  };
  const serve = (name: string) =>
    new Response(new Uint8Array(read(name)), {
      headers: { "content-type": FILES[name]!, "cache-control": "no-cache" },
    });
  app.use(UI_PATH, headers);
  app.use(`${UI_PATH}/*`, headers);
  app.get(UI_PATH, () => serve("index.html"));
  app.get(`${UI_PATH}/`, () => serve("index.html"));
  app.get(`${UI_PATH}/:file`, (c) => {
    const name = c.req.param("file");
    return Object.hasOwn(FILES, name) ? serve(name) : c.notFound();
  });
}
