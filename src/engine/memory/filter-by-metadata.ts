import type { Metadata } from "../../api/common.js";

/**
 * `filterByMetadata` of a document (spec, Document): which existing memories serve as context
 * while it is dreamed. Scalar values match exactly (AND across keys); array values match any of
 * their items (OR within a key). A memory's metadata is its source document's, and a string that
 * the memory holds in an array counts as held.
 */
export function matchesFilterByMetadata(metadata: Metadata, filter: Metadata | null | undefined): boolean {
  if (!filter) return true;
  for (const [key, want] of Object.entries(filter)) {
    const have = metadata[key];
    if (have === undefined) return false;
    const held = Array.isArray(have) ? have : [have];
    const wanted = Array.isArray(want) ? want : [want];
    if (!wanted.some((w) => held.some((h) => h === w))) return false;
  }
  return true;
}
