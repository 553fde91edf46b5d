import { endpoints } from "../../../api/endpoints.js";
import type { MemoryRef } from "../../../api/memories.js";
import type { EngineContext } from "../../context.js";
import { ConflictError } from "../../errors.js";
import {
  forgetByIds,
  forgetByIdsInTransaction,
  forgetByMeaning,
  reembedChunks,
} from "../../memory/forget.js";
import { readMemory } from "../../memory/read.js";
import { type MemorySelector, selectMemory, updateMemory, writeMemories } from "../../memory/write.js";
import { newId, transaction } from "../../store/db.js";
import {
  getMemoryRow,
  getMemoryRowIn,
  isForgotten,
  listMemories,
  type MemoryRow,
  memoryMetadata,
  memoryRelationRows,
  memorySourceDocumentIds,
} from "../../store/memories.js";
import { pagination } from "../../store/pages.js";
import { type EngineApp, route } from "../route.js";
import { readNamespace, readNamespaces, writeNamespace } from "./container-tag.js";

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
  const deps = { db, embedder: ctx.embedder, log: ctx.log };

  route(app, ctx, endpoints.legacyAddMemories, async ({ principal, body, signal }) => {
    const rows = await writeMemories(
      deps,
      async () => await writeNamespace(db, principal, body.containerTag),
      body.memories.map((m) => ({ ...m, eventDate: m.temporalContext?.eventDate })),
      signal,
    );
    return {
      documentId: null,
      memories: rows.map((r) => ({
        id: r.id,
        memory: r.memory,
        isStatic: r.is_static === 1,
        createdAt: r.created_at,
        forgetAfter: r.forget_after,
        forgetReason: r.forget_reason,
        metadata: memoryMetadata(r),
      })),
    };
  });

  route(app, ctx, endpoints.legacyUpdateMemory, async ({ principal, body, signal }) => {
    const ns = await readNamespace(db, principal, body.containerTag);
    return await updateMemory(deps, ns?.id ?? null, selectorOf(body), body, signal);
  });

  route(app, ctx, endpoints.legacyForgetMemory, async ({ principal, body }) => {
    const ns = await readNamespace(db, principal, body.containerTag);
    const { id, rewritten } = await transaction(db, async () => {
      const row = await selectMemory(db, ns?.id ?? null, selectorOf(body));
      if (isForgotten(row)) {
        throw new ConflictError("Memory already forgotten", `memory ${row.id} is already forgotten`);
      }
      const done = await forgetByIdsInTransaction(
        db,
        row.namespace_id,
        [row.id],
        body.reason ?? "forgotten by id",
      );
      return { id: row.id, rewritten: done.rewritten };
    });
    await reembedChunks(deps, rewritten);
    return { id, forgotten: true as const };
  });

  route(app, ctx, endpoints.legacyForgetMatching, async ({ principal, body, signal }) => {
    const ns = await readNamespace(db, principal, body.containerTag);
    const batchId = newId("fgb");
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
      const at = new Date().toISOString();
      const rows: MemoryRow[] = [];
      for (const id of new Set(body.ids ?? [])) {
        const r = ns ? await getMemoryRow(db, ns.id, id) : undefined;
        if (r !== undefined && !isForgotten(r, at)) rows.push(r);
      }
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
    const at = new Date().toISOString();
    const memoryEntries = await Promise.all(
      page.items.map(async (m) => {
        const row = (await getMemoryRowIn(db, ids, m.id))!;
        const history =
          (
            await readMemory(db, row.namespace_id, row.id, {
              include: ["related"],
              relatedLimit: HISTORY_LIMIT,
            })
          )?.included?.related?.parents ?? [];
        const memoryRelations: { id: string; memory: string; relation: string }[] = [];
        for (const r of await memoryRelationRows(db, row.id)) {
          const other = await getMemoryRow(db, row.namespace_id, r.id);
          if (other && !isForgotten(other, at))
            memoryRelations.push({ id: other.id, memory: other.memory, relation: r.relation });
        }
        return { ...m, history, memoryRelations, documentIds: await memorySourceDocumentIds(db, row.id) };
      }),
    );
    return { memoryEntries, pagination: pagination(body.page, body.limit, page.total) };
  });
}
