import { conversationTurns } from "../text/conversation.js";

/** A piece of a document's text; `content === text.slice(start, end)`. */
export interface TextChunk {
  content: string;
  position: number;
  start: number;
  end: number;
  /** Conversations: the role of the turn the chunk is (or is a piece of), as written. */
  speaker?: string;
  /**
   * Conversations: the turns around the chunk's turn (CONTEXT_TURNS each side, one per line),
   * which search indexes beside the chunk at a lower weight: the question a turn answers is
   * usually the turn before it.
   */
  context?: string;
}

/** Turns each side of a conversation chunk's turn that make its context. */
export const CONTEXT_TURNS = 3;

export const CHUNK_MAX_CHARS_DEFAULT = 800;

/** A span of the text that chunking treats as indivisible, and what kind of boundary comes before it. */
interface Piece {
  start: number;
  end: number;
  /** "unit": a paragraph or turn starts here; "sentence" / "word": a cut inside one. */
  opens: "unit" | "sentence" | "word";
}

/**
 * Splits text into chunks of at most maxChars (one piece longer than that cannot happen: a
 * paragraph or turn is split on sentences, a sentence on words, a word by characters).
 * A conversation is one chunk per turn (a turn longer than maxChars is split on sentences, never
 * joined with the next), each with its speaker and context: short whole turns are what a search
 * under a character budget should return. Plain text packs paragraphs; paragraph boundaries are
 * preferred over sentence boundaries when a chunk is at least half full, and text that fits in
 * maxChars is one chunk. Chunks never start or end in whitespace; whitespace-only text gives none.
 */
export function chunkText(
  text: string,
  opts: { format: "plain" | "conversation"; maxChars?: number },
): TextChunk[] {
  const maxChars = Math.max(1, Math.floor(opts.maxChars ?? CHUNK_MAX_CHARS_DEFAULT));
  if (opts.format === "conversation") return turnChunks(text, maxChars);
  const units = paragraphs(text);
  const first = units[0];
  const last = units.at(-1);
  if (first === undefined || last === undefined) return [];
  if (last.end - first.start <= maxChars) return [makeChunk(text, 0, first.start, last.end)];

  const pieces: Piece[] = [];
  for (const unit of units) splitUnit(text, unit.start, unit.end, maxChars, pieces);
  return pack(text, pieces, maxChars);
}

/** One chunk per turn (pieces of an over-long turn), with the turn's speaker and context. */
function turnChunks(text: string, maxChars: number): TextChunk[] {
  const turns = conversationTurns(text);
  const lines = turns.map((t) => text.slice(t.start, t.end));
  const chunks: TextChunk[] = [];
  turns.forEach((turn, i) => {
    const context = [
      ...lines.slice(Math.max(0, i - CONTEXT_TURNS), i),
      ...lines.slice(i + 1, i + 1 + CONTEXT_TURNS),
    ].join("\n");
    const pieces: Piece[] = [];
    splitUnit(text, turn.start, turn.end, maxChars, pieces);
    for (const c of pack(text, pieces, maxChars)) {
      chunks.push({
        ...makeChunk(text, chunks.length, c.start, c.end),
        ...(turn.role ? { speaker: turn.role } : {}),
        context,
      });
    }
  });
  return chunks;
}

function makeChunk(text: string, position: number, start: number, end: number): TextChunk {
  return { content: text.slice(start, end), position, start, end };
}

/** Greedy packing; when the next piece does not fit, the chunk ends at the last paragraph break if that keeps it half full. */
function pack(text: string, pieces: Piece[], maxChars: number): TextChunk[] {
  const chunks: TextChunk[] = [];
  let i = 0;
  while (i < pieces.length) {
    const start = pieces[i]!.start;
    let j = i;
    while (j + 1 < pieces.length && pieces[j + 1]!.end - start <= maxChars) j++;
    if (j + 1 < pieces.length && pieces[j + 1]!.opens !== "unit") {
      for (let k = j - 1; k >= i; k--) {
        if (pieces[k + 1]!.opens === "unit" && pieces[k]!.end - start >= maxChars / 2) {
          j = k;
          break;
        }
      }
    }
    chunks.push(makeChunk(text, chunks.length, start, pieces[j]!.end));
    i = j + 1;
  }
  return chunks;
}

/** Paragraphs: runs of text separated by blank lines, trimmed. */
function paragraphs(text: string): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const separator = /\n[ \t\r\f\v]*\n/g;
  let from = 0;
  const push = (start: number, end: number) => {
    const span = trimSpan(text, start, end);
    if (span) out.push(span);
  };
  for (const match of text.matchAll(separator)) {
    push(from, match.index);
    from = match.index + match[0].length;
  }
  push(from, text.length);
  return out;
}

function trimSpan(text: string, start: number, end: number): { start: number; end: number } | null {
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  return start < end ? { start, end } : null;
}

function isSpace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    code === 0xa0 ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0xfeff ||
    code === 0x3000
  );
}

function splitUnit(text: string, start: number, end: number, maxChars: number, out: Piece[]): void {
  if (end - start <= maxChars) {
    out.push({ start, end, opens: "unit" });
    return;
  }
  let opens: Piece["opens"] = "unit";
  for (const sentence of sentences(text, start, end)) {
    if (sentence.end - sentence.start <= maxChars) {
      out.push({ ...sentence, opens });
    } else {
      for (const word of words(text, sentence.start, sentence.end, maxChars)) {
        out.push({ ...word, opens });
        opens = "word";
      }
    }
    opens = "sentence";
  }
}

/*
 * Sentence boundaries come from Intl.Segmenter (ICU, built into Node): measured here at ~0.03 ms for
 * 2 kB and ~2.4 ms for 200 kB, against ~0.9 ms and ~95 ms (plus ~100 ms to load the model) for
 * wink-nlp, whose sentences are token spans that would still need mapping back to offsets.
 * ICU breaks after titles and initials ("Dr. | Smith"); those breaks are merged back.
 */
const segmenter = new Intl.Segmenter("en", { granularity: "sentence" });
const ABBREVIATION_END =
  /(?:^|[\s(])(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sr|Jr|St|Mt|Gen|Col|Lt|Sgt|Capt|Rev|Hon|Fig|vs|approx|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|[A-Z])\.$/;

function sentences(text: string, start: number, end: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let pending: { start: number; end: number } | null = null;
  for (const segment of segmenter.segment(text.slice(start, end))) {
    const span = trimSpan(text, start + segment.index, start + segment.index + segment.segment.length);
    if (span === null) continue;
    const merged: { start: number; end: number } = pending ? { start: pending.start, end: span.end } : span;
    if (ABBREVIATION_END.test(text.slice(Math.max(merged.start, merged.end - 12), merged.end))) {
      pending = merged;
    } else {
      out.push(merged);
      pending = null;
    }
  }
  if (pending) out.push(pending);
  return out;
}

/** Cuts an over-long sentence at the last whitespace that fits, or at maxChars when there is none. */
function words(text: string, start: number, end: number, maxChars: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let from = start;
  while (end - from > maxChars) {
    let cut = from + maxChars;
    while (cut > from && !isSpace(text.charCodeAt(cut))) cut--;
    if (cut === from) {
      cut = from + maxChars;
      // Never between the halves of a surrogate pair.
      if (isLowSurrogate(text.charCodeAt(cut)) && cut - 1 > from) cut--;
    }
    const span = trimSpan(text, from, cut);
    if (span) out.push(span);
    from = cut;
    while (from < end && isSpace(text.charCodeAt(from))) from++;
  }
  const rest = trimSpan(text, from, end);
  if (rest) out.push(rest);
  return out;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
