import { endpoints } from "../../api/endpoints.js";
import type { EngineContext } from "../context.js";
import { notFound } from "../errors.js";
import { forgetByIds, forgetByMeaning } from "../memory/forget.js";
import { readMemory } from "../memory/read.js";
import { findNamespace } from "../store/namespaces.js";
import { type EngineApp, route } from "./route.js";

/**
 * GET /ns/{namespace}/memories/{id} (another namespace's memory is a 404; a forgotten one answers
 * with isForgotten: true), DELETE /ns/{namespace}/memories (forget by id) and
 * DELETE /ns/{namespace}/memories/semantic (forget by meaning; dryRun changes nothing).
 */
export function memoryRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;
  const namespaceId = (organizationId: string, name: string) =>
    findNamespace(db, organizationId, name)?.id ?? null;

  route(app, endpoints.forgetSemantic, ({ params, body }, c) =>
    forgetByMeaning(
      { db, embedder: ctx.embedder, log: ctx.log },
      namespaceId(c.get("principal").organization.id, params.namespace),
      body.query,
      body.dryRun === true,
      c.req.raw.signal,
    ),
  );

  route(app, endpoints.forgetMemories, ({ params, body }, c) =>
    forgetByIds(db, namespaceId(c.get("principal").organization.id, params.namespace), body.ids),
  );

  route(app, endpoints.getMemory, ({ params, query }, c) => {
    const ns = namespaceId(c.get("principal").organization.id, params.namespace);
    const memory = ns && readMemory(db, ns, params.id, query);
    if (!memory) throw notFound("Memory");
    return memory;
  });
}
