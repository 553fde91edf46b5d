import { Hono } from "hono";
import { ZodError } from "zod";
import { describeIssues } from "../api/errors.js";
import { REQUEST_BODY_MAX_BYTES } from "../api/limits.js";
import { openApiDocument } from "../api/openapi.js";
import { uiRoutes } from "../ui/static-files.js";
import { VERSION } from "../version.js";
import { bearerAuth } from "./auth.js";
import type { EngineContext } from "./context.js";
import { diskFull, HttpError } from "./errors.js";
import { connectorCallbackRoute, connectorRoutes } from "./routes/connectors.js";
import { documentRoutes } from "./routes/documents.js";
import { batchRoutes } from "./routes/legacy/batch.js";
import { memoryRoutes } from "./routes/memories.js";
import { namespaceRoutes } from "./routes/namespaces.js";
import { organizationRoutes } from "./routes/organization.js";
import { profileRoutes } from "./routes/profile.js";
import { type EngineEnv, type EngineRoutes, tooLarge } from "./routes/route.js";
import { searchRoutes } from "./routes/search.js";
import { isDiskFull } from "./store/db.js";
import { SecretKeyError } from "./store/secrets.js";

/** Every group of routes; each registers its endpoints of the contract. */
const ROUTES: EngineRoutes[] = [
  documentRoutes,
  batchRoutes,
  searchRoutes,
  memoryRoutes,
  profileRoutes,
  connectorRoutes,
  namespaceRoutes,
  organizationRoutes,
];

/**
 * The whole HTTP API as one fetch-style app: public health and OpenAPI, then bearer auth, the
 * routes, and one place that turns every error into an ErrorResponse.
 */
export function createApp(ctx: EngineContext): Hono<EngineEnv> {
  const app = new Hono<EngineEnv>();

  app.onError((err, c) => {
    if (isDiskFull(err)) {
      ctx.log(`disk full on ${c.req.method} ${new URL(c.req.url).pathname}: ${err.message}`);
      err = diskFull();
    }
    if (err instanceof SecretKeyError) err = new HttpError(500, "Secret key mismatch", err.message);
    if (err instanceof HttpError) {
      return c.json({ error: err.message, ...(err.details ? { details: err.details } : {}) }, err.status);
    }
    if (err instanceof ZodError) {
      return c.json({ error: "Invalid request", details: describeIssues("body", err.issues) }, 400);
    }
    ctx.log(
      `unexpected error on ${c.req.method} ${new URL(c.req.url).pathname}: ${err.stack ?? err.message}`,
    );
    return c.json({ error: "Internal server error" }, 500);
  });
  app.notFound((c) =>
    c.json(
      { error: "Not found", details: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` },
      404,
    ),
  );

  // Before anything reads it: a declared size over the limit is refused at once.
  app.use(async (_c, next) => {
    const declared = Number(_c.req.header("content-length") ?? "0");
    if (declared > REQUEST_BODY_MAX_BYTES) throw tooLarge();
    await next();
  });

  app.get("/health", (c) => c.json({ status: "ok", version: VERSION }));
  app.get("/openapi.json", (c) => c.json(openApiDocument(new URL(c.req.url).origin)));
  // The OAuth provider sends the user's browser here, without an API key; the one-time state authorizes it.
  connectorCallbackRoute(app, ctx);
  // The memory browser's static page: it holds no data and asks the API below with the user's key.
  uiRoutes(app);

  app.use(bearerAuth(ctx));
  for (const routes of ROUTES) routes(app, ctx);
  return app;
}
