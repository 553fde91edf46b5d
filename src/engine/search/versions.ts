import type { Db } from "../store/connection.js";
import { latestRowids } from "../store/memories.js";
import { newerVersionIds } from "../store/memory-relations.js";
import { type Scope, visibleRowids } from "../store/search-scope.js";
import type { Scored } from "./fusion.js";

/**
 * Weight of a match on a superseded version's words against a match on the current version's own.
 * Search answers with the current version of a memory, never an older one as a hit of its own
 * (history is the version endpoints' and `include.related`'s), but a question in the old words
 * ("does she still live in Porto?") still finds the memory: it ranks its current version at this
 * share of the old version's similarity, under a current version that matches as well.
 */
export const SUPERSEDED_WEIGHT = 0.5;

/** Most versions walked from a superseded memory to its latest (a chain is a handful long). */
const MAX_VERSION_STEPS = 100;

/**
 * The rowid of the latest version of each superseded memory of `ids`, for those whose latest
 * version is visible in `scope` (live, passing its filter). A chain whose latest version was
 * forgotten or has expired has none: forgetting a memory forgets its fact, every version of it.
 */
export async function latestVersionRowids(
  db: Db,
  scope: Scope,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  // Every memory's walk a step at a time, all of them in the same two statements per step.
  let walks = [...new Set(ids)].map((id) => ({ id, seen: new Set([id]), frontier: [id] }));
  for (let step = 0; step < MAX_VERSION_STEPS && walks.length > 0; step++) {
    const newer = await newerVersionIds(
      db,
      walks.flatMap((w) => w.frontier),
    );
    for (const w of walks)
      w.frontier = w.frontier
        .flatMap((f) => newer.get(f) ?? [])
        .filter((n) => !w.seen.has(n) && w.seen.add(n));
    const latest = await latestRowids(db, scope.namespaceId, [...new Set(walks.flatMap((w) => w.frontier))]);
    for (const w of walks) {
      const hit = w.frontier.find((n) => latest.has(n));
      if (hit !== undefined) found.set(w.id, latest.get(hit)!);
    }
    walks = walks.filter((w) => !found.has(w.id) && w.frontier.length > 0);
  }
  const visible = await visibleRowids(db, "memories", [...found.values()], {
    ...scope,
    includeSuperseded: false,
  });
  for (const [id, rowid] of found) if (!visible.has(rowid)) found.delete(id);
  return found;
}

/** How currentVersions reads the items of one search. */
export interface VersionAccess<T> {
  /** The id of the superseded memory an item is, or null (a chunk, a latest memory). */
  superseded(item: T): string | null;
  /** The rowid of each superseded memory's visible latest version (see latestVersionRowids). */
  latest(ids: string[]): Promise<Map<string, number>>;
  /** The items of memories not among the candidates yet, in the order given. */
  load(scored: Scored[]): Promise<T[]>;
}

/**
 * Each superseded memory among the candidates gives way to its latest version, scored
 * SUPERSEDED_WEIGHT times its own similarity (or the latest's own, when that is higher); one whose
 * latest is gone (forgotten, expired, filtered out) is dropped, as is one under the threshold once
 * weighed. Best first again (stable: equal similarities keep their order).
 */
export async function currentVersions<T extends { scored: Scored }>(
  items: readonly T[],
  threshold: number,
  access: VersionAccess<T>,
): Promise<T[]> {
  const old = items.flatMap((item) => {
    const id = access.superseded(item);
    return id === null ? [] : [{ item, id }];
  });
  if (old.length === 0) return [...items];
  const latest = await access.latest(old.map((o) => o.id));
  // The best weighed similarity each latest version gets from its older versions.
  const raised = new Map<number, Scored>();
  for (const { item, id } of old) {
    const rowid = latest.get(id);
    const similarity = item.scored.similarity * SUPERSEDED_WEIGHT;
    if (rowid === undefined || similarity < threshold) continue;
    const best = raised.get(rowid);
    if (!best || best.similarity < similarity)
      raised.set(rowid, { ...item.scored, corpus: "memories", rowid, similarity });
  }
  const kept = items
    .filter((item) => access.superseded(item) === null)
    .map((item) => {
      const s = item.scored;
      const up = s.corpus === "memories" ? raised.get(s.rowid) : undefined;
      if (up === undefined) return item;
      raised.delete(s.rowid);
      return up.similarity > s.similarity ? { ...item, scored: { ...s, similarity: up.similarity } } : item;
    });
  const added = raised.size > 0 ? await access.load([...raised.values()]) : [];
  return [...kept, ...added].sort((a, b) => b.scored.similarity - a.scored.similarity);
}
