import { randomBytes } from "node:crypto";

/** Strings longer than this are written into an answer piece by piece. */
const LONG_STRING = 1 << 20;
/** Characters of a long string written at a time: the event loop is free between two. */
const PIECE = 1 << 18;

/**
 * A JSON answer that holds the event loop only for the small parts of its value: a document's
 * content of 40 MB, serialized in one JSON.stringify, held it for hundreds of milliseconds (and as
 * a second copy of the text). Long strings are left out of the first pass and written afterwards
 * in pieces, each as its consumer pulls it; an answer without one is sent as it is.
 */
export function jsonResponse(value: unknown, status: number): Response {
  const long: string[] = [];
  const mark = `\u0001${randomBytes(6).toString("hex")}:`;
  const text = JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "string" && v.length > LONG_STRING ? `${mark}${long.push(v) - 1}` : v,
  );
  const headers = { "content-type": "application/json" };
  if (long.length === 0) return new Response(text, { status, headers });
  // The marks come back as JSON strings: `"\u0001<hex>:<n>"`.
  const quoted = JSON.stringify(mark).slice(1, -1);
  const parts = text.split(new RegExp(`"${quoted.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")}(\\d+)"`));
  const encoder = new TextEncoder();
  let part = 0;
  let at = -1;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        // parts: text, index, text, index, ..., text
        if (part % 2 === 0) {
          controller.enqueue(encoder.encode(parts[part]!));
          part++;
          if (part >= parts.length) controller.close();
          return;
        }
        const s = long[Number(parts[part])]!;
        if (at < 0) {
          controller.enqueue(encoder.encode('"'));
          at = 0;
          return;
        }
        if (at >= s.length) {
          controller.enqueue(encoder.encode('"'));
          at = -1;
          part++;
          return;
        }
        let end = Math.min(at + PIECE, s.length);
        // A surrogate pair stays whole.
        if (end < s.length && /[\ud800-\udbff]/.test(s[end - 1]!)) end--;
        controller.enqueue(encoder.encode(JSON.stringify(s.slice(at, end)).slice(1, -1)));
        at = end;
      },
    }),
    { status, headers },
  );
}
