import { isRelationNoun } from "../memory/extract/people.js";
import { slotsAsked } from "../memory/extract/slots.js";
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

/**
 * Whether a question asks about the one who asks it: in the first person ("where do I work?",
 * "where do we live?"), not about someone of theirs ("where does my sister live?").
 */
export function asksAboutTheUser(words: readonly string[]): boolean {
  const firstPerson = words.some((w) =>
    /^(i|me|my|mine|myself|we|us|our|ours|ourselves|i['’]m|i['’]ve|am)$/.test(w),
  );
  const someones = words.some((w, i) => /^(my|our)$/.test(words[i - 1] ?? "") && isRelationNoun(w));
  return firstPerson && !someones;
}

/**
 * Score factor of another person's fact when a question asks about the user. Lower than
 * OTHER_PERSON_FACTOR: a memory's subject is known, where a turn's speaker only hints at whose a
 * fact is; and the user's own answer often shares fewer words ("joined Northwind" for "where do I
 * work?") than a sister's "works as an architect" does.
 */
export const OTHERS_FACT_FACTOR = 0.5;

/** How much a user's fact of the slot a question asks about gains: similarity + boost * (1 - similarity). */
export const ASKED_SLOT_BOOST = 0.4;
/**
 * Score factor of a user's fact of another slot than the one asked: "hates early morning meetings"
 * shares "morning" with "what do I drink in the morning?" but answers another question.
 */
export const OTHER_SLOT_FACTOR = 0.8;

/**
 * A question about the user answers with the user's own facts: another person's (their sister's
 * job, their wife's habits) rank lower, and the user's facts of the slot it asks about higher than
 * those of other slots ("what do I drink in the morning?" finds "switched to green tea", which
 * shares no word with it, above "hates early morning meetings", which shares "morning").
 */
export function weighTheUsers<T extends { scored: { similarity: number } }>(
  items: readonly T[],
  query: string,
  /** The item's subject kind and slot (a memory's; null for a chunk). */
  fact: (item: T) => { whose: string | null; slot: string | null } | null,
): T[] {
  const words = query.toLowerCase().match(/[\p{L}'’]+/gu) ?? [];
  if (!items.some((i) => fact(i) !== null) || !asksAboutTheUser(words)) return [...items];
  const asked = slotsAsked(words);
  const weighed = (i: T, similarity: number) => ({ ...i, scored: { ...i.scored, similarity } });
  return items
    .map((i) => {
      const f = fact(i);
      const s = i.scored.similarity;
      if (f?.whose === "person") return weighed(i, s * OTHERS_FACT_FACTOR);
      if (f?.whose !== "user" || f.slot === null || asked.size === 0) return i;
      return asked.has(f.slot)
        ? weighed(i, s + ASKED_SLOT_BOOST * (1 - s))
        : weighed(i, s * OTHER_SLOT_FACTOR);
    })
    .sort((a, b) => b.scored.similarity - a.scored.similarity);
}
