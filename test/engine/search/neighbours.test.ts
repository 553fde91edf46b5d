import { describe, expect, it } from "vitest";
import {
  NEIGHBOUR_BEFORE,
  NEIGHBOUR_FACTOR,
  neighbourCandidates,
} from "../../../src/engine/search/neighbours.js";

// Two sessions of turns: rowid = 100 * session + position.
const turns = [
  ...[0, 1, 2, 3].map((p) => ({ documentId: "s1", position: p, rowid: 100 + p })),
  ...[0, 1, 2].map((p) => ({ documentId: "s2", position: p, rowid: 200 + p })),
];
const adjacent = (documentId: string, positions: number[]) =>
  turns.filter((t) => t.documentId === documentId && positions.includes(t.position));

describe("neighbourCandidates", () => {
  it("brings the turn after a hit and the one before, in the same session only", () => {
    // "Where did you go?" matched (s1, position 1); "Denver!" is position 2.
    const out = neighbourCandidates(
      [{ rowid: 101, documentId: "s1", position: 1, similarity: 0.9 }],
      adjacent,
    );
    expect(out).toEqual([
      { rowid: 102, similarity: 0.9 * NEIGHBOUR_FACTOR, of: 101 },
      { rowid: 100, similarity: 0.9 * NEIGHBOUR_FACTOR * NEIGHBOUR_BEFORE, of: 101 },
    ]);
  });

  it("skips turns already found, keeps the best offer, and drops what falls under the threshold", () => {
    const hits = [
      { rowid: 101, documentId: "s1", position: 1, similarity: 0.9 },
      { rowid: 103, documentId: "s1", position: 3, similarity: 0.5 },
      { rowid: 200, documentId: "s2", position: 0, similarity: 0.3 },
    ];
    const out = neighbourCandidates(hits, adjacent, { threshold: 0.3 });
    // 102 is offered by 101 (after it) and by 103 (before it): 101's offer is better.
    expect(out.find((c) => c.rowid === 102)).toEqual({
      rowid: 102,
      similarity: 0.9 * NEIGHBOUR_FACTOR,
      of: 101,
    });
    // 100 comes from 101; 201 (0.3 x 0.8) is under the threshold; no hit comes back as a candidate.
    expect(out.map((c) => c.rowid).sort()).toEqual([100, 102]);
  });

  it("looks up only the best few hits", () => {
    const hits = [
      { rowid: 100, documentId: "s1", position: 0, similarity: 0.4 },
      { rowid: 202, documentId: "s2", position: 2, similarity: 0.8 },
    ];
    expect(neighbourCandidates(hits, adjacent, { sources: 1 }).map((c) => c.of)).toEqual([202]);
  });
});
