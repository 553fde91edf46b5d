import type { Scored } from "./fusion.js";

/**
 * Weight of a superseded memory version against the current one. An older value (where someone
 * lived before) still answers "what did X do before", so search keeps it reachable, but a current
 * version that matches as well always ranks above it.
 */
export const SUPERSEDED_WEIGHT = 0.5;

/**
 * Weighs superseded versions down, drops those that fall under the threshold, and restores the
 * order (stable: equal similarities keep their order).
 */
export function weighSuperseded<T extends { scored: Scored; isLatest: boolean }>(
  items: readonly T[],
  threshold: number,
): T[] {
  if (items.every((i) => i.isLatest)) return [...items];
  return items
    .map((i) =>
      i.isLatest ? i : { ...i, scored: { ...i.scored, similarity: i.scored.similarity * SUPERSEDED_WEIGHT } },
    )
    .filter((i) => i.isLatest || i.scored.similarity >= threshold)
    .sort((a, b) => b.scored.similarity - a.scored.similarity);
}
