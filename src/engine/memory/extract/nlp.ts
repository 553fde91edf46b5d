import { createRequire } from "node:module";
import type winkNLP from "wink-nlp";
import type { ItemSentence, ItsFunction } from "wink-nlp";

/** One token of a sentence, with its offsets in the analysed text. */
export interface Token {
  value: string;
  lower: string;
  pos: string;
  lemma: string;
  /** Whitespace before the token in the original text. */
  space: string;
  start: number;
  end: number;
  negated: boolean;
  /** Not in the text: the unsaid subject of a clause, taken from the clause before it (extract/clauses.ts). */
  implied?: boolean;
}

export interface Sentence {
  text: string;
  start: number;
  end: number;
  tokens: Token[];
}

// Loading the model costs ~100 ms and ~65 MB; one instance serves every extraction in the process,
// loaded by the first: a processing thread that has not extracted yet (a server that only answers
// searches) does not hold it. Both packages are CommonJS, so a synchronous require loads them.
let instance: ReturnType<typeof winkNLP> | null = null;
function nlp(): ReturnType<typeof winkNLP> {
  if (!instance) {
    const require = createRequire(import.meta.url);
    const create = require("wink-nlp") as typeof winkNLP;
    instance = create(require("wink-eng-lite-web-model"));
  }
  return instance;
}

/**
 * Runs without a space longer than this are not words (base64, minified code, a file of one
 * letter): wink's tokenizer takes quadratic time on one (2 s for 50,000 characters, 32 s for the
 * 200,000 a dream reads at most, holding its processing thread), so they are read as spaces.
 */
export const MAX_WORD_CHARS = 1_000;
const NOT_A_WORD = new RegExp(`\\S{${MAX_WORD_CHARS + 1},}`, "g");

const INLINE_CODE = /`[^`\n]{1,200}`/g;
const CODE_DOT = "\u2024";

/** A token read with inline code's dots stood in for: its words as the text writes them. */
function restore(token: Token, text: string): void {
  if (!token.value.includes(CODE_DOT)) return;
  token.value =
    token.end > token.start ? text.slice(token.start, token.end) : token.value.replaceAll(CODE_DOT, ".");
  token.lower = token.value.toLowerCase();
  token.lemma = token.lemma.replaceAll(CODE_DOT, ".");
}

/** Splits text into sentences of POS-tagged, lemmatized tokens (wink-nlp, English lite model). */
export function analyse(original: string): Sentence[] {
  const engine = nlp();
  const its = engine.its;
  // Blanked in place: offsets into the text stay right. A dot inside inline code ("`raw.sales`")
  // ends no sentence: read as a one-character stand-in, each token's value taken back from the text.
  const blanked = original.replace(NOT_A_WORD, (run) => " ".repeat(run.length));
  const text = blanked.replace(INLINE_CODE, (code) => code.replaceAll(".", CODE_DOT));
  const doc = engine.readDoc(text);
  const sentences: Sentence[] = [];
  let cursor = 0;
  doc.sentences().each((s: ItemSentence) => {
    const tokens: Token[] = [];
    const t = s.tokens();
    const values = t.out(its.value) as string[];
    const spaces = t.out(its.precedingSpaces) as string[];
    const pos = t.out(its.pos) as string[];
    const lemmas = t.out(its.lemma as unknown as ItsFunction<string>) as string[];
    const negations = t.out(its.negationFlag) as unknown as boolean[];
    for (let i = 0; i < values.length; i++) {
      const value = values[i] ?? "";
      // Offsets come from locating each token in the text, so whitespace oddities cannot drift them.
      const found = text.indexOf(value, cursor);
      const start = found >= 0 && found - cursor <= (spaces[i]?.length ?? 0) + 2 ? found : cursor;
      const end = found === start ? start + value.length : start;
      if (found === start) cursor = end;
      tokens.push({
        value,
        lower: value.toLowerCase(),
        pos: pos[i] ?? "X",
        lemma: (lemmas[i] ?? value).toLowerCase(),
        space: spaces[i] ?? "",
        start,
        end,
        negated: Boolean(negations[i]),
      });
    }
    if (tokens.length === 0) return;
    const start = tokens[0]!.start;
    const end = tokens[tokens.length - 1]!.end;
    if (text !== blanked) for (const token of tokens) restore(token, blanked);
    sentences.push({ text: blanked.slice(start, end), start, end, tokens });
  });
  return sentences;
}
