import type { MiddlewareHandler } from "hono";
import type { EngineContext } from "./context.js";
import { UnauthenticatedError } from "./errors.js";
import type { EngineEnv } from "./routes/route.js";
import { authenticate } from "./store/organizations.js";

/** Bearer API keys: each maps to one organization; only a hash of it is stored. */
export function bearerAuth(ctx: EngineContext): MiddlewareHandler<EngineEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization");
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new UnauthenticatedError("Missing API key", "send the header Authorization: Bearer <API key>");
    }
    const principal = await authenticate(ctx.db, match[1]!);
    if (!principal) throw new UnauthenticatedError("Invalid API key", "the API key is unknown or revoked");
    c.set("principal", principal);
    await next();
  };
}
