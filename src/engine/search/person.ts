import type { Db } from "../store/connection.js";
import { speakersIn } from "../store/search-index.js";

/** Score factor of a unit said by someone else when the query names a person (RECIPE.md step 5). */
export const OTHER_PERSON_FACTOR = 0.7;

/** Shortest query word that names a person by a prefix ("mel" for Melanie). */
const MIN_PREFIX = 3;
/** Names one query word may stand for ("jo" is too short; "joa" may still be Joanna or Joan). */
const MAX_NAMES_PER_WORD = 4;

export interface NamedPeople {
  /** The people the query names, lowercased as the store keeps speakers. */
  names: Set<string>;
  /** Full names the query only abbreviated, to be searched too ("mel" -> "melanie"). */
  expansions: string[];
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}.'_-]*/gu;

/**
 * The namespace's speakers (conversation turns' roles) that the query's words name, whole or by a
 * prefix of at least three letters. Each name costs an index seek (chunks_namespace_speaker),
 * however large the namespace; all the words' seeks are one statement. Memory subjects are not
 * names: extractors also give things ("music", "caroline's art") as subjects.
 */
export async function namedPeople(
  db: Db,
  namespaceId: string,
  query: string,
  stopWords: ReadonlySet<string>,
): Promise<NamedPeople> {
  const names = new Set<string>();
  const expansions = new Set<string>();
  const words = [
    ...new Set((query.toLowerCase().match(WORD) ?? []).map((w) => w.replace(/[.'_-]+$/, ""))),
  ].filter((word) => word.length >= MIN_PREFIX && !stopWords.has(word));
  // The names each word starts, walked from the word in order, all words in one statement.
  const named = await speakersIn(
    db,
    namespaceId,
    words.map((word) => [word, `${word}\u{10ffff}`] as const),
    MAX_NAMES_PER_WORD,
  );
  for (const word of words) {
    for (const name of named.get(word) ?? []) {
      // A name of several words is named by its first ("jon snow" by "jon").
      const first = name.split(/\s+/)[0] ?? "";
      if (first.startsWith(word)) {
        names.add(name);
        if (name !== word) expansions.add(name);
      }
    }
  }
  return { names, expansions: [...expansions] };
}
