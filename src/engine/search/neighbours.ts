/**
 * Neighbouring turns: when a turn of a conversation ranks high, the turns right after and before
 * it in the same session are candidates too. An answer often sits one turn later than the words
 * that match the question ("Where did you go?" - "Denver!"), or one turn earlier (the question the
 * matching turn answers). Not wired into search: measured wired (commit f681277 on branch
 * recall2, LoCoMo hybrid at 3000 characters) it changed nothing, 0.800 -> 0.800 at factor 0.8
 * with 5 sources and at 0.95 with 10, also when it raised neighbours already found. A chunk's
 * indexed context (ingest/chunk.ts, 3 turns each side) already finds the turn next to the words.
 */

/** A chunk hit of a conversation: its turn's position in its document. */
export interface TurnHit {
  rowid: number;
  documentId: string;
  position: number;
  similarity: number;
}

/** A neighbouring turn brought in by a hit, at a share of that hit's similarity. */
export interface NeighbourCandidate {
  rowid: number;
  similarity: number;
  /** The hit that brought it. */
  of: number;
}

/** Share of the hit's similarity the turn after it gets (the one before gets NEIGHBOUR_BEFORE of that). */
export const NEIGHBOUR_FACTOR = 0.8;
export const NEIGHBOUR_BEFORE = 0.9;
/** Hits whose neighbours are looked up: the best few (each costs a look-up). */
export const NEIGHBOUR_SOURCES = 5;

/**
 * Neighbour candidates of the best `sources` hits: the turns at position ± 1 in the same
 * document, each at `factor` x the hit's similarity (the turn before at NEIGHBOUR_BEFORE of that),
 * the best offer kept when two hits share a neighbour. Turns already among the hits and those
 * under `threshold` are left out; best first.
 */
export function neighbourCandidates(
  hits: readonly TurnHit[],
  adjacent: (documentId: string, positions: number[]) => { rowid: number; position: number }[],
  opts: { sources?: number; factor?: number; threshold?: number } = {},
): NeighbourCandidate[] {
  const factor = opts.factor ?? NEIGHBOUR_FACTOR;
  const threshold = opts.threshold ?? 0;
  const present = new Set(hits.map((h) => h.rowid));
  const best = new Map<number, NeighbourCandidate>();
  const sources = [...hits]
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, opts.sources ?? NEIGHBOUR_SOURCES);
  for (const hit of sources) {
    const positions = [hit.position + 1, hit.position - 1].filter((p) => p >= 0);
    for (const n of adjacent(hit.documentId, positions)) {
      if (present.has(n.rowid)) continue;
      const share = n.position > hit.position ? factor : factor * NEIGHBOUR_BEFORE;
      const similarity = hit.similarity * share;
      if (similarity < threshold) continue;
      const seen = best.get(n.rowid);
      if (!seen || seen.similarity < similarity)
        best.set(n.rowid, { rowid: n.rowid, similarity, of: hit.rowid });
    }
  }
  return [...best.values()].sort((a, b) => b.similarity - a.similarity);
}
