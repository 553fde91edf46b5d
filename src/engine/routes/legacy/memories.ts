import { endpoints } from "../../../api/endpoints.js";
import type { MemoryRef } from "../../../api/memories.js";
import type { EngineContext } from "../../context.js";
import { forgetByIds, forgetByMeaning, forgetSelected, newForgetBatchId } from "../../memory/forget.js";
import { listMemories, liveMemoriesOf, type MemorySelector, memoryLineage } from "../../memory/read.js";
import { updateMemory, writeMemories } from "../../memory/write.js";
import { type EngineApp, pagination, route } from "../route.js";
import { readNamespace, readNamespaces, writableNamespace } from "./container-tag.js";

/** Earlier versions shown per memory in a v4 list. */
const HISTORY_LIMIT = 10;

const selectorOf = (b: { id?: string | undefined; content?: string | undefined }): MemorySelector =>
  b.id !== undefined ? { id: b.id } : { content: b.content ?? "" };

/**
 * v4 memories: POST /v4/memories (memories written directly), PATCH (a new version), DELETE
 * (forget one: v5's forget by id, 409 when already forgotten), POST /forget-matching (v5's forget
 * by meaning, or by ids, with the legacy threshold and cap) and POST /list (v5's memory list with
 * each memory's history, relations and source documents).
 */
export function legacyMemoryRoutes(app: EngineApp, ctx: EngineContext): void {
  const { db } = ctx;
  const deps = { db, embedder: ctx.embedder, log: ctx.log, secretScreening: ctx.secretScreening };

  route(app, ctx, endpoints.legacyAddMemories, async ({ principal, body, signal }) => {
    const { memories, redacted } = await writeMemories(
      deps,
      principal.organization.id,
      writableNamespace(principal, body.containerTag),
      body.memories.map((m) => ({ ...m, eventDate: m.temporalContext?.eventDate })),
      signal,
    );
    return {
      documentId: null,
      memories: memories.map((m) => ({
        id: m.id,
        memory: m.memory,
        isStatic: m.isStatic,
        // toMemory always sets it.
        createdAt: m.system!.createdAt,
        forgetAfter: m.forgetAfter,
        forgetReason: m.forgetReason,
        metadata: m.metadata,
      })),
      ...(redacted.length > 0 ? { redacted } : {}),
    };
  });

  route(app, ctx, endpoints.legacyUpdateMemory, async ({ principal, body, signal }) => {
    const ns = await readNamespace(db, principal, body.containerTag);
    return await updateMemory(deps, ns?.id ?? null, selectorOf(body), body, signal);
  });

  route(app, ctx, endpoints.legacyForgetMemory, async ({ principal, body }) => {
    const ns = await readNamespace(db, principal, body.containerTag);
    const id = await forgetSelected(deps, ns?.id ?? null, selectorOf(body), body.reason ?? "forgotten by id");
    return { id, forgotten: true as const };
  });

  route(app, ctx, endpoints.legacyForgetMatching, async ({ principal, body, signal }) => {
    const ns = await readNamespace(db, principal, body.containerTag);
    const batchId = newForgetBatchId();
    const reason = body.reason ?? `forget-matching ${batchId}`;
    let candidates: MemoryRef[];
    if (body.query !== undefined) {
      // The dry run of v5's forget by meaning gives the candidates; the cap applies before anything is forgotten.
      const found = await forgetByMeaning(deps, ns?.id ?? null, body.query, true, signal, {
        threshold: body.threshold,
        limit: body.maxForget,
      });
      candidates = found.matches;
    } else {
      const rows = ns ? await liveMemoriesOf(db, ns.id, body.ids ?? []) : [];
      candidates = rows.slice(0, body.maxForget).map((r) => ({ id: r.id, memory: r.memory }));
    }
    const what = body.query !== undefined ? `matching '${body.query}'` : "of the given ids";
    if (body.dryRun || !ns || candidates.length === 0) {
      return {
        dryRun: body.dryRun,
        count: candidates.length,
        forgetBatchId: null,
        summary: `${candidates.length} ${candidates.length === 1 ? "memory" : "memories"} ${what} ${body.dryRun ? "would be" : "were"} forgotten`,
        ...(body.dryRun ? { candidates } : { forgotten: [] }),
      };
    }
    const done = await forgetByIds(
      deps,
      ns.id,
      candidates.map((c) => c.id),
      reason,
    );
    return {
      dryRun: false,
      count: done.count,
      forgetBatchId: batchId,
      summary: `${done.count} ${done.count === 1 ? "memory" : "memories"} ${what} were forgotten`,
      forgotten: done.matches,
    };
  });

  route(app, ctx, endpoints.legacyListMemories, async ({ principal, body }) => {
    const namespaces = await readNamespaces(db, principal, body.containerTags);
    if (namespaces.length === 0)
      return { memoryEntries: [], pagination: pagination(body.page, body.limit, 0) };
    const ids = namespaces.map((n) => n.id);
    const page = await listMemories(db, ids, body, body.filters, false);
    const memoryEntries = await Promise.all(
      page.items.map(async (m) => ({ ...m, ...(await memoryLineage(db, ids, m.id, HISTORY_LIMIT)) })),
    );
    return { memoryEntries, pagination: pagination(body.page, body.limit, page.total) };
  });
}
