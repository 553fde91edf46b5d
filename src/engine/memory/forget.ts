import type { ForgetResponse } from "../../api/memories.js";
import type { Embedder } from "../models/embedder.js";
import { search } from "../search/search.js";
import { type Db, transaction } from "../store/db.js";
import { getMemoryRow, markForgotten } from "../store/memories.js";
import { queryTerms, stemTexts } from "../text/terms.js";

/**
 * Forgetting a memory hides it from lists, search and the profile; a direct read still answers it
 * with `isForgotten: true`. A memory past its `forget_after` counts as forgotten the same way
 * without being written (see LIVE_MEMORY_SQL).
 */

/** Most memories one forget-by-meaning matches. */
export const FORGET_SEMANTIC_LIMIT = 100;
/**
 * Similarity (search's fused score in [0, 1]) a memory needs to be forgotten by meaning. Stricter
 * than search's default 0.3 because forgetting is destructive: lexically, a memory must hold about
 * half of the query's information (its idf mass: tanh⁻¹ 0.45 ≈ 0.48, see search/fusion.ts).
 */
export const FORGET_SEMANTIC_THRESHOLD = 0.45;
/**
 * Share of the query's informative terms a memory's own text must hold. Search also weighs the
 * text around a memory (its source turns), which is right for finding but not for forgetting:
 * "forget dark roast coffee" must not forget "She lives in Berlin" because coffee came up nearby.
 */
export const FORGET_OWN_TEXT_SHARE = 0.5;

/** Whether the memory's own words hold at least FORGET_OWN_TEXT_SHARE of the query's terms. */
export function matchesOwnText(query: string, memory: string): boolean {
  const terms = queryTerms(query);
  if (terms.length === 0) return false;
  const own = new Set(stemTexts([memory])[0] ?? []);
  const held = terms.filter((t) => t.stems.length > 0 && t.stems.every((s) => own.has(s))).length;
  return held > 0 && held / terms.length >= FORGET_OWN_TEXT_SHARE;
}

/** Forgets memories of one namespace by exact id; unknown ids (or another namespace's) are reported. */
export async function forgetByIds(
  db: Db,
  namespaceId: string | null,
  ids: readonly string[],
  reason = "forgotten by id",
): Promise<ForgetResponse> {
  return await transaction(db, async () => {
    const matches: ForgetResponse["matches"] = [];
    const errors: ForgetResponse["errors"] = [];
    for (const id of new Set(ids)) {
      const row = namespaceId ? await getMemoryRow(db, namespaceId, id) : undefined;
      if (!row) {
        errors.push({ id, error: "memory not found" });
        continue;
      }
      // Forgetting a forgotten memory is a success: it stays forgotten.
      await markForgotten(db, row.id, reason);
      matches.push({ id: row.id, memory: row.memory });
    }
    return { count: matches.length, matches, errors };
  });
}

/** How a forget by meaning may be tuned (legacy forget-matching sets them; v5 uses the defaults). */
export interface ForgetByMeaningOptions {
  /** Default FORGET_SEMANTIC_THRESHOLD. */
  threshold?: number | undefined;
  /** Most memories matched; default FORGET_SEMANTIC_LIMIT. */
  limit?: number | undefined;
  /** Recorded as each forgotten memory's forgetReason; default names the query. */
  reason?: string | undefined;
}

/**
 * Forgets the namespace's live, latest memories that match `query` by meaning: the search
 * service's own scoring (lexical, plus vectors when an embedder is configured) over memories, at
 * FORGET_SEMANTIC_THRESHOLD. A dry run returns the matches, forgets nothing and counts 0.
 */
export async function forgetByMeaning(
  deps: { db: Db; embedder?: Embedder | null; log?: (m: string) => void },
  namespaceId: string | null,
  query: string,
  dryRun: boolean,
  signal?: AbortSignal,
  opts: ForgetByMeaningOptions = {},
): Promise<ForgetResponse> {
  const found = await search(
    deps,
    namespaceId,
    {
      query,
      searchMode: "memories",
      limit: opts.limit ?? FORGET_SEMANTIC_LIMIT,
      threshold: opts.threshold ?? FORGET_SEMANTIC_THRESHOLD,
    },
    signal,
  );
  // Only current versions, and only on the memory's own words (see FORGET_OWN_TEXT_SHARE).
  const matches = found.results
    .filter((h): h is typeof h & { memory: string } => typeof h.memory === "string" && h.isLatest !== false)
    .filter((h) => matchesOwnText(query, h.memory))
    .map((h) => ({ id: h.id, memory: h.memory }));
  if (dryRun || !namespaceId || matches.length === 0) return { count: 0, matches, errors: [] };
  return await forgetByIds(
    deps.db,
    namespaceId,
    matches.map((m) => m.id),
    opts.reason ?? `forgotten by meaning: ${query}`,
  );
}
