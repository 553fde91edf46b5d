import { type ErrorHandler, Hono } from "hono";
import { ZodError } from "zod";
import { describeIssues } from "../api/errors.js";
import { REQUEST_BODY_MAX_BYTES, UPLOAD_BODY_MAX_BYTES } from "../api/limits.js";
import { openApiDocument } from "../api/openapi.js";
import { uiRoutes } from "../ui/static-files.js";
import { VERSION } from "../version.js";
import { bearerAuth } from "./auth.js";
import type { EngineContext } from "./context.js";
import {
  ConfigurationError,
  ConflictError,
  DomainError,
  ForbiddenError,
  InputError,
  NotFoundError,
  QuotaExceededError,
  RateLimitedError,
  StorageFullError,
  TooLargeError,
  UnauthenticatedError,
  UnavailableError,
} from "./errors.js";
import { UnknownBucketError } from "./memory/profile.js";
import { rateLimit } from "./rate-limit.js";
import { connectorCallbackRoute, connectorRoutes } from "./routes/connectors.js";
import { documentRoutes } from "./routes/documents.js";
import { batchRoutes } from "./routes/legacy/batch.js";
import { legacyConversationRoutes } from "./routes/legacy/conversations.js";
import { legacyDocumentRoutes } from "./routes/legacy/documents.js";
import { documentFileRoutes } from "./routes/legacy/documents-file.js";
import { legacyMemoryRoutes } from "./routes/legacy/memories.js";
import { legacyProfileRoutes } from "./routes/legacy/profile.js";
import { legacySearchRoutes } from "./routes/legacy/search.js";
import { memoryRoutes } from "./routes/memories.js";
import { fileTooLarge, isUploadPath } from "./routes/multipart.js";
import { namespaceRoutes } from "./routes/namespaces.js";
import { organizationRoutes } from "./routes/organization.js";
import { profileRoutes } from "./routes/profile.js";
import { discardRest } from "./routes/refused-body.js";
import { type EngineEnv, type EngineRoutes, tooLarge } from "./routes/route.js";
import { searchRoutes } from "./routes/search.js";
import { databaseBackend, databaseState, isDiskFull, StoreUnavailableError } from "./store/db.js";
import { FilterTooLargeError } from "./store/filter.js";
import { OrganizationBucketError } from "./store/profile.js";
import { SecretKeyError } from "./store/secrets.js";

type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 409 | 413 | 429 | 500 | 503 | 507;

/** Each domain error's HTTP status: the one place where the engine's errors meet HTTP. */
function statusOf(err: DomainError): ErrorStatus {
  if (err instanceof InputError) return 400;
  // A missing operator setting is not the caller's fault, but the request cannot be served as sent (kept 400).
  if (err instanceof ConfigurationError) return 400;
  if (err instanceof UnauthenticatedError) return 401;
  if (err instanceof QuotaExceededError) return 402;
  if (err instanceof ForbiddenError) return 403;
  if (err instanceof NotFoundError) return 404;
  if (err instanceof ConflictError) return 409;
  if (err instanceof TooLargeError) return 413;
  if (err instanceof RateLimitedError) return 429;
  if (err instanceof StorageFullError) return 507;
  if (err instanceof UnavailableError) return 503;
  return 500;
}

/** A fault of the engine's own setup that the operator must mend (answered 500 with what to do). */
class InternalError extends DomainError {}

/** Errors of lower layers that name their own thing (a bucket, a key), as domain errors. */
function asDomainError(err: Error): DomainError | undefined {
  if (err instanceof DomainError) return err;
  if (isDiskFull(err)) return new StorageFullError();
  if (err instanceof StoreUnavailableError) return new UnavailableError(err.retryAfterSeconds, err.message);
  if (err instanceof UnknownBucketError) return new InputError(undefined, err.message);
  if (err instanceof OrganizationBucketError) {
    return new ForbiddenError(`Bucket '${err.bucket}' is owned by the organization`, err.message);
  }
  if (err instanceof SecretKeyError) return new InternalError("Secret key mismatch", err.message);
  if (err instanceof ZodError) return new InputError(undefined, describeIssues("body", err.issues));
  if (err instanceof FilterTooLargeError) return new InputError("filter", err.message);
  return undefined;
}

/**
 * Turns every error into an ErrorResponse `{ error, details? }`. Exported so that a route mounted
 * on another app (tests mount the OAuth callback alone) answers the same way.
 */
export function errorHandler(ctx: EngineContext): ErrorHandler<EngineEnv> {
  return async (err, c) => {
    const where = `${c.req.method} ${new URL(c.req.url).pathname}`;
    const known = asDomainError(err);
    if (!known) {
      ctx.log(`unexpected error on ${where}: ${err.stack ?? err.message}`);
      return c.json({ error: "Internal server error" }, 500);
    }
    if (known instanceof StorageFullError && known !== err) {
      ctx.log(`disk full on ${where}: ${err.message}`);
      // The reserve's reading said there was room: the next request reads the disk again.
      ctx.disk?.forget();
    }
    if (known instanceof RateLimitedError || known instanceof UnavailableError)
      c.header("Retry-After", String(known.retryAfterSeconds));
    // A body refused before it was read (a declared size past the limit, a missing key, a bad
    // path) is dropped before the answer, within a bound, so a client still sending reads the
    // answer rather than a reset. (A body refused midway was dropped where it was read.)
    const body = c.req.raw.body;
    if (body && !body.locked) await discardRest(body.getReader());
    return c.json(
      { error: known.title, ...(known.details ? { details: known.details } : {}) },
      statusOf(known),
    );
  };
}

/** Hono's `/ns/:namespace/document` as a pattern of whole paths (`*` matches the rest). */
const pathPattern = (path: string) =>
  new RegExp(
    `^${path
      .split("/")
      .map((seg) =>
        seg === "*" ? ".*" : seg.startsWith(":") ? "[^/]+" : seg.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("/")}$`,
  );

/**
 * The methods some route takes at this path: a wrong method gets 405 with them in `Allow`, not a
 * 404 that reads as a wrong path. Middleware (`app.use`, method ALL) is no route of its own.
 */
function allowedMethods(app: Hono<EngineEnv>, path: string): string[] {
  const methods = new Set(
    app.routes.filter((r) => r.method !== "ALL" && pathPattern(r.path).test(path)).map((r) => r.method),
  );
  // Hono answers HEAD with the GET route.
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

/** Every group of routes; each registers its endpoints of the contract. */
const ROUTES: EngineRoutes[] = [
  documentRoutes,
  batchRoutes,
  documentFileRoutes,
  searchRoutes,
  memoryRoutes,
  profileRoutes,
  connectorRoutes,
  namespaceRoutes,
  organizationRoutes,
  legacyDocumentRoutes,
  legacyConversationRoutes,
  legacyMemoryRoutes,
  legacySearchRoutes,
  legacyProfileRoutes,
];

/**
 * The whole HTTP API as one fetch-style app: public health and OpenAPI, then bearer auth, the
 * routes, and one place that turns every error into an ErrorResponse.
 */
export function createApp(ctx: EngineContext): Hono<EngineEnv> {
  const app = new Hono<EngineEnv>();

  app.onError(errorHandler(ctx));
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    const allowed = allowedMethods(app, path);
    // A route of this method that found nothing (a missing UI file) is a plain 404.
    if (allowed.length && !allowed.includes(c.req.method)) {
      c.header("Allow", allowed.join(", "));
      return c.json(
        { error: "Method not allowed", details: `${path} takes ${allowed.join(", ")}, not ${c.req.method}` },
        405,
      );
    }
    return c.json({ error: "Not found", details: `no route for ${c.req.method} ${path}` }, 404);
  });

  // Before anything reads it: a declared size over the limit is refused at once. Uploads have
  // their own limit (a 50 MB file), counted again as they stream (routes/multipart.ts).
  app.use(async (c, next) => {
    const declared = Number(c.req.header("content-length") ?? "0");
    const upload = isUploadPath(new URL(c.req.url).pathname);
    if (declared > (upload ? UPLOAD_BODY_MAX_BYTES : REQUEST_BODY_MAX_BYTES)) {
      throw upload ? fileTooLarge() : tooLarge();
    }
    await next();
  });

  // A load balancer takes a replica out while its database cannot be read (503), not only when
  // the process is gone.
  app.get("/health", async (c) => {
    try {
      return c.json({ status: "ok", version: VERSION, database: await databaseState(ctx.db) });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      return c.json(
        { status: "unavailable", version: VERSION, database: { backend: databaseBackend(ctx.db), error } },
        503,
      );
    }
  });
  app.get("/openapi.json", (c) => c.json(openApiDocument(new URL(c.req.url).origin)));
  // The OAuth provider sends the user's browser here, without an API key; the one-time state authorizes it.
  connectorCallbackRoute(app, ctx);
  // The memory browser's static page: it holds no data and asks the API below with the user's key.
  uiRoutes(app);

  app.use(bearerAuth(ctx));
  // After auth (the bucket is the key's), before any route: a refused request changes nothing.
  const perMinute = ctx.limits?.requestsPerMinute ?? null;
  if (perMinute !== null) app.use(rateLimit(perMinute, ctx.clock));
  for (const routes of ROUTES) routes(app, ctx);
  return app;
}
