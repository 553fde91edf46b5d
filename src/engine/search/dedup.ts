import { STOP_WORDS } from "../text/terms.js";

/** A hit candidate as dedup sees it, in rank order. */
export interface DedupItem {
  corpus: "chunks" | "memories";
  text: string;
  /** Chunks: the document and the span of its text the chunk is. */
  documentId?: string | null;
  start?: number;
  end?: number;
  /** Memories: where each source document's text says it (offsets null when unknown). */
  sources?: readonly { documentId: string; start: number | null }[];
}

/**
 * Share of a hit's distinct content words already in the results at which the hit is dropped:
 * only near-repeats (RECIPE.md step 7: 0.7 cost answers, 0.9 kept repeats).
 */
export const NOVELTY_OVERLAP = 0.8;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Walks the candidates best first and drops the ones that add nothing to those kept before them
 * (hybrid search, RECIPE.md step 7): a memory whose every source lies in a chunk already kept
 * (the chunk says it, with more around it), and any hit whose distinct content words are at least
 * NOVELTY_OVERLAP already in the results (a fact told twice, a memory that restates its turn).
 * Under a budget of characters or hits, what is dropped would only push out something new.
 */
export function dropRepeats<T extends DedupItem>(items: readonly T[]): T[] {
  const kept: T[] = [];
  const chunksByDocument = new Map<string, { start: number; end: number }[]>();
  const seen = new Set<string>();
  for (const item of items) {
    if (item.corpus === "memories" && item.sources && item.sources.length > 0) {
      const covered = item.sources.every(
        (s) =>
          s.start !== null &&
          (chunksByDocument.get(s.documentId) ?? []).some((c) => c.start <= s.start! && s.start! < c.end),
      );
      if (covered) continue;
    }
    const words = [...new Set((item.text.toLowerCase().match(WORD) ?? []).filter((w) => !STOP_WORDS.has(w)))];
    if (words.length > 0) {
      const known = words.filter((w) => seen.has(w)).length;
      if (known / words.length >= NOVELTY_OVERLAP) continue;
    }
    for (const w of words) seen.add(w);
    if (item.corpus === "chunks" && item.documentId && item.start !== undefined && item.end !== undefined) {
      const list = chunksByDocument.get(item.documentId) ?? [];
      list.push({ start: item.start, end: item.end });
      chunksByDocument.set(item.documentId, list);
    }
    kept.push(item);
  }
  return kept;
}
