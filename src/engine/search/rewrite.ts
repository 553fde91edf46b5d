/**
 * `rewriteQuery: true`, offline: the query cleaned of the words that ask the memory rather than
 * name what is asked about. "Hey, can you remember what I told you about Anna's wedding?" searches
 * for "Anna's wedding": without the rewrite, "remember" and "told" are informative words to lexical
 * search (they are not function words) and rank whatever talks about remembering and telling above
 * the wedding. Function words are left alone here: search drops them anyway (text/terms.ts).
 */

/** Words of a request to a memory (greetings, politeness, "remember", "tell me", "anything about"). */
const REQUEST_WORDS: ReadonlySet<string> = new Set(
  (
    "hey hi hello hiya ok okay please pls plz thanks thank thx kindly " +
    "remember remembers remembered recall recalls recalled recollect remind reminds reminded " +
    "tell telling told say saying said mention mentions mentioned mentioning share shared " +
    "know knows knew think thought wonder wondering curious " +
    "something anything everything stuff info information details " +
    "memory memories note notes noted search find look lookup " +
    "again earlier previously already ever"
  ).split(" "),
);

/** `what's` -> `what is`: contractions joined to a word would hide it from the word list above. */
const CONTRACTIONS: [RegExp, string][] = [
  [/\b(\w+)'re\b/gi, "$1 are"],
  [/\b(\w+)'ve\b/gi, "$1 have"],
  [/\b(\w+)'ll\b/gi, "$1 will"],
  [/\b(\w+)'d\b/gi, "$1 would"],
  [/\bcan't\b/gi, "can not"],
  [/\bwon't\b/gi, "will not"],
  [/\b(\w+)n't\b/gi, "$1 not"],
  [/\b(what|who|where|when|how|that|there|it)'s\b/gi, "$1 is"],
];

/**
 * The query without its request words, with typographic quotes and contractions normalized and
 * spaces collapsed; the query itself when nothing else would be left.
 */
export function rewriteQuery(query: string): string {
  let q = query
    .normalize("NFKC")
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d]/g, '"');
  for (const [pattern, replacement] of CONTRACTIONS) q = q.replace(pattern, replacement);
  const kept = q
    .split(/\s+/)
    .filter((token) => {
      const word = token.toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
      return word !== "" && !REQUEST_WORDS.has(word);
    })
    .join(" ")
    .trim();
  return kept === "" ? query : kept;
}
