import { STOP_WORDS, stemTexts } from "./terms.js";

/**
 * Taking forgotten sentences out of the passages search matches and shows (see memory/forget.ts).
 * A forgotten memory's source sentence is recorded as text; wherever the document says it, the
 * chunk covering it loses it: in what is indexed, embedded and returned. The document's own text
 * stays as stored.
 */

/** A span of a document's text, as a chunk is one: `content` is, or was made from, text[start, end). */
export interface Passage {
  start: number;
  end: number;
  content: string;
  /** A conversation turn's role: a turn left with only "Role:" says nothing. */
  speaker?: string | null | undefined;
}

/** Where the document's text says each of `sentences` (every occurrence), sorted and merged. */
export function sentenceSpans(text: string, sentences: readonly string[]): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  for (const s of sentences) {
    if (s.length === 0) continue;
    for (let at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + s.length))
      spans.push({ start: at, end: at + s.length });
  }
  spans.sort((a, b) => a.start - b.start);
  const merged: { start: number; end: number }[] = [];
  for (const s of spans) {
    const last = merged.at(-1);
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else merged.push({ ...s });
  }
  return merged;
}

/** Spacing left by a cut: no doubled spaces, no blank runs, no space before punctuation. */
function tidy(text: string): string {
  return text
    .replace(/[ \t]{2,}/g, " ")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n[ \t]+/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/ +([,.;:!?])/g, "$1")
    .trim();
}

/**
 * text[from, to) without what `spans` cover, tidied. A span that is a whole line takes its line
 * break along: a forgotten turn leaves no blank line.
 */
function cut(
  text: string,
  from: number,
  to: number,
  spans: readonly { start: number; end: number }[],
): string {
  let out = "";
  let at = from;
  for (const s of spans) {
    if (s.end <= from || s.start >= to) continue;
    const start = Math.max(at, s.start);
    let end = Math.max(at, Math.min(to, s.end));
    const lineStart = start === from || text[start - 1] === "\n";
    if (lineStart && text[end] === "\n" && end < to) end += 1;
    out += text.slice(at, start);
    at = end;
  }
  return tidy(out + text.slice(at, to));
}

/** Each occurrence of `sentences` in `text` removed (for texts not addressed by offsets: contexts). */
export function withoutSentences(text: string, sentences: readonly string[]): string {
  const spans = sentenceSpans(text, sentences);
  return spans.length === 0 ? text : cut(text, 0, text.length, spans);
}

/**
 * The passage without what `spans` (offsets in the document's text) cover, tidied. A passage cut
 * across a sentence loses the part it holds. A passage whose content is not the text's span (an
 * older row) loses the sentences wherever its content says them.
 */
export function redactPassage(
  text: string,
  p: Passage,
  spans: readonly { start: number; end: number }[],
  sentences: readonly string[],
): string {
  if (text.slice(p.start, p.end) !== p.content) return withoutSentences(p.content, sentences);
  if (!spans.some((s) => s.start < p.end && s.end > p.start)) return p.content;
  return cut(text, p.start, p.end, spans);
}

/**
 * A chunk of a document without its forgotten sentences: the one rule for a document's new chunks
 * (processed again) and its stored ones (a forget). Its content is made from the document's text
 * where the chunk's span still lies in it (a stored chunk already redacted loses a new sentence
 * too, also where a chunk boundary cuts it), its context loses them wherever it says them; null
 * when nothing is left to say (the chunk goes).
 */
export function redactChunk(
  text: string,
  chunk: Passage & { context: string },
  spans: readonly { start: number; end: number }[],
  sentences: readonly string[],
): { content: string; context: string } | null {
  const whole = chunk.end <= text.length ? text.slice(chunk.start, chunk.end) : chunk.content;
  const content = redactPassage(text, { ...chunk, content: whole }, spans, sentences);
  if (saysNothing(content, chunk.speaker)) return null;
  return { content, context: withoutSentences(chunk.context, sentences) };
}

/**
 * A document's new chunks (made from `text`) without its forgotten sentences, each by
 * redactChunk, in order: null for a chunk left with nothing to say. A chunk without a context
 * keeps none.
 */
export function redactChunks<C extends Passage & { context?: string | undefined }>(
  text: string,
  chunks: readonly C[],
  sentences: readonly string[],
): (C | null)[] {
  if (sentences.length === 0) return [...chunks];
  const spans = sentenceSpans(text, sentences);
  return chunks.map((c) => {
    const r = redactChunk(text, { ...c, context: c.context ?? "" }, spans, sentences);
    if (r === null) return null;
    return { ...c, content: r.content, ...(c.context === undefined ? {} : { context: r.context }) };
  });
}

/** Whether a redacted passage has nothing left to say (no word, or a turn's role alone). */
export function saysNothing(content: string, speaker?: string | null): boolean {
  let rest = content;
  if (speaker) {
    const prefix = new RegExp(`^\\s*${speaker.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*:`, "i");
    rest = rest.replace(prefix, "");
  }
  return !/[\p{L}\p{N}]/u.test(rest);
}

/**
 * A document title without a forgotten sentence it was made from (a title is the text's first
 * line, cut at a word with "…"): the sentence taken out where the title holds it, and a title
 * that is a piece of the sentence, or ends in the sentence's opening words, loses that piece.
 * Null when no word is left.
 */
export function redactTitle(title: string, sentences: readonly string[]): string | null {
  let t = title;
  for (const s of sentences) {
    const bare = t.replace(/…$/, "").trim();
    if (bare.length === 0) break;
    if (s.includes(bare)) return null;
    if (t.includes(s)) {
      t = withoutSentences(t, [s]);
      continue;
    }
    // A line cut inside the sentence: the title's end is the sentence's start.
    for (let k = Math.min(bare.length, s.length); k >= MIN_TITLE_OVERLAP; k--) {
      if (bare.endsWith(s.slice(0, k))) {
        t = tidy(bare.slice(0, bare.length - k));
        break;
      }
    }
  }
  return /[\p{L}\p{N}]/u.test(t) ? t : null;
}

/** Characters a title's end must share with a sentence's start to count as cut from it. */
const MIN_TITLE_OVERLAP = 12;

/** Share of a memory's informative stems a sentence must hold to be taken as its source. */
export const SOURCE_SENTENCE_SHARE = 0.6;

/** A text's informative stems (stop words left out). */
function informativeStems(text: string): Set<string> {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w));
  return new Set(stemTexts([words.join(" ")])[0] ?? []);
}

/**
 * The sentence of `text` a memory says, for a memory whose source span is unknown (a model
 * extracted it): the memory's own words where the text holds them verbatim, else the one
 * sentence (or line) holding the largest share of its informative stems, at least
 * SOURCE_SENTENCE_SHARE of them and two. Null when none does: nothing is taken on a guess.
 */
export function sentenceSaying(text: string, memory: string): string | null {
  const own = memory.trim();
  if (own.length > 0 && text.includes(own)) return own;
  const wanted = informativeStems(memory);
  if (wanted.size < 2) return null;
  let best: string | null = null;
  let bestHeld = 0;
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    const has = informativeStems(sentence);
    const held = [...wanted].filter((s) => has.has(s)).length;
    if (held > bestHeld) {
      best = sentence.trim();
      bestHeld = held;
    }
  }
  return best && bestHeld >= 2 && bestHeld / wanted.size >= SOURCE_SENTENCE_SHARE ? best : null;
}
