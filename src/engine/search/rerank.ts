import { type QueryTerm, stemWords } from "../text/terms.js";
import type { Scored } from "./fusion.js";
import { bySimilarity } from "./fusion.js";

/** A hit candidate with what the rerankers read. */
export interface RerankItem {
  scored: Scored;
  text: string;
  /** Chunks: their document and place in it (for `aggregate`). */
  documentId?: string | null;
  position?: number;
  /** Chunks merged into this one by `aggregate`, best first (itself included). */
  merged?: RerankItem[];
}

/** How many words apart the query's terms may be before proximity starts to cost. */
const PROXIMITY_SLACK = 4;

/**
 * Match quality of a text for `order`, in [0, 1]: the idf-weighted share of the query's terms the
 * text holds (any number of times), times a proximity factor (k + 4) / (span + 4) from the
 * shortest window of words holding one occurrence of each matched term (k of them), counted half.
 */
export function matchQuality(
  stems: readonly string[],
  terms: readonly QueryTerm[],
  idf: readonly number[],
): number {
  const total = idf.reduce((a, b) => a + b, 0);
  const positions = new Map<string, number[]>();
  stems.forEach((s, i) => {
    const list = positions.get(s);
    if (list) list.push(i);
    else positions.set(s, [i]);
  });
  const matched: number[][] = [];
  let weight = 0;
  terms.forEach((t, i) => {
    const p = positions.get(t.stems[0] ?? "");
    if (!p) return;
    matched.push(p);
    // Without idf (an empty index) every term weighs the same.
    weight += total > 0 ? (idf[i] ?? 0) : 1;
  });
  if (matched.length === 0) return 0;
  const coverage = weight / (total > 0 ? total : terms.length);
  const k = matched.length;
  const proximity =
    k === 1 ? 1 : Math.min(1, (k + PROXIMITY_SLACK) / (shortestSpan(matched) + PROXIMITY_SLACK));
  return coverage * (0.5 + 0.5 * proximity);
}

/** Length of the shortest window holding one position from each list (classic k-way sweep). */
function shortestSpan(lists: readonly number[][]): number {
  const events = lists.flatMap((l, which) => l.map((pos) => ({ pos, which }))).sort((a, b) => a.pos - b.pos);
  const count = new Array<number>(lists.length).fill(0);
  let covered = 0;
  let best = Number.POSITIVE_INFINITY;
  let lo = 0;
  for (const e of events) {
    const seen = count[e.which] ?? 0;
    count[e.which] = seen + 1;
    if (seen === 0) covered++;
    while (covered === lists.length) {
      const first = events[lo]!;
      best = Math.min(best, e.pos - first.pos + 1);
      const left = (count[first.which] ?? 1) - 1;
      count[first.which] = left;
      if (left === 0) covered--;
      lo++;
    }
  }
  return best;
}

/**
 * `rerank: "order"`: re-scores the candidates by how closely their text holds the query's terms.
 * Similarity only rises, by up to half of the room left: s' = s + (1 − s) · q / 2, with q the
 * match quality above. The threshold was applied before, so the set of hits does not change;
 * their order does, and the reported similarity is the re-scored one (results stay ordered by it).
 */
export function rerankOrder<T extends RerankItem>(
  items: T[],
  terms: readonly QueryTerm[],
  idfOf: (item: T) => readonly number[],
): T[] {
  if (items.length === 0 || terms.length === 0) return items;
  const stems = stemWords(
    items.map((i) => i.text),
    terms,
  );
  items.forEach((item, i) => {
    const q = matchQuality(stems[i] ?? [], terms, idfOf(item));
    const s = item.scored.similarity;
    item.scored.similarity = s + ((1 - s) * q) / 2;
  });
  return items.sort((a, b) => bySimilarity(a.scored, b.scored));
}

/** Chunks of one document shown together by `aggregate`. */
const AGGREGATE_MAX_CHUNKS = 3;

/**
 * `rerank: "aggregate"`: chunks of the same document become one hit. The hit keeps its best
 * chunk's id; its text is up to three of the document's matching chunks in document order
 * (joined by a blank line); its similarity is the best chunk's, raised by the others:
 * s = s₁ + (1 − s₁) · 0.3 · (1 − Π(1 − sᵢ)) over the other chunks. Memories pass through.
 */
export function rerankAggregate<T extends RerankItem>(items: T[]): T[] {
  const groups = new Map<string, T[]>();
  const out: T[] = [];
  for (const item of items) {
    if (item.scored.corpus !== "chunks" || !item.documentId) {
      out.push(item);
      continue;
    }
    const g = groups.get(item.documentId);
    if (g) g.push(item);
    else groups.set(item.documentId, [item]);
  }
  for (const group of groups.values()) {
    group.sort((a, b) => bySimilarity(a.scored, b.scored));
    const best = group[0]!;
    const others = group.slice(1);
    const s1 = best.scored.similarity;
    const rest = 1 - others.reduce((p, o) => p * (1 - o.scored.similarity), 1);
    const shown = group.slice(0, AGGREGATE_MAX_CHUNKS).sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
    out.push({
      ...best,
      scored: { ...best.scored, similarity: s1 + (1 - s1) * 0.3 * rest },
      text: shown.map((c) => c.text).join("\n\n"),
      merged: group,
    });
  }
  return out.sort((a, b) => bySimilarity(a.scored, b.scored));
}
