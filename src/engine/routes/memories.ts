import { endpoints } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { NotFoundError } from "../errors.js";
import { forgetByIds, forgetByMeaning } from "../memory/forget.js";
import { readMemory } from "../memory/read.js";
import { type EngineApp, route } from "./route.js";

/**
 * GET /ns/{namespace}/memories/{id} (another namespace's memory is a 404; a forgotten one answers
 * with isForgotten: true), DELETE /ns/{namespace}/memories (forget by id) and
 * DELETE /ns/{namespace}/memories/semantic (forget by meaning; dryRun changes nothing).
 */
export function memoryRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;

  route(
    app,
    ctx,
    endpoints.forgetSemantic,
    async ({ namespace, body, signal }) =>
      await forgetByMeaning(
        { db, embedder: ctx.embedder, log: ctx.log },
        namespace?.id ?? null,
        body.query,
        body.dryRun === true,
        signal,
      ),
  );

  route(
    app,
    ctx,
    endpoints.forgetMemories,
    async ({ namespace, body }) =>
      await forgetByIds({ db, embedder: ctx.embedder, log: ctx.log }, namespace?.id ?? null, body.ids),
  );

  route(app, ctx, endpoints.getMemory, async ({ namespace, params, query }) => {
    const memory = namespace && (await readMemory(db, namespace.id, params.id, query));
    if (!memory) throw new NotFoundError("Memory");
    return memory;
  });
}
