import type { DocumentType } from "../../api/index.js";
import { conversationTurns, detectFormat } from "../text/conversation.js";
import { formatDay, parseDocumentDate } from "../text/dates.js";
import { type FetchedResource, type FetchOptions, FetchRefusedError, safeFetch } from "./fetch.js";
import { htmlToText } from "./html.js";
import { pdfToText } from "./pdf.js";

/** What a document's content turned out to be: its text, its type and, for a URL, where it came from. */
export interface ResolvedContent {
  text: string;
  type: DocumentType;
  format: "plain" | "conversation";
  title: string | null;
  url: string | null;
}

/** A fetched URL whose content type memctx cannot turn into text. */
export class UnsupportedContentError extends FetchRefusedError {
  override name = "UnsupportedContentError";
}

const URL_PATTERN = /^https?:\/\/\S+$/i;

/** True when the content is a single http(s) URL and nothing else, which is fetched instead of stored. */
export function isUrlContent(content: string): boolean {
  return URL_PATTERN.test(content.trim());
}

/**
 * What a document's content is: text as it is, or a URL fetched and read. `date` (the document's
 * date, else when it was added) names a conversation between "user" and "assistant", whose
 * speakers name nothing.
 */
export async function resolveContent(
  content: string,
  opts: FetchOptions,
  date?: string | null,
): Promise<ResolvedContent> {
  if (!isUrlContent(content)) {
    const format = detectFormat(content);
    return { text: content, type: "text", format, title: textTitle(content, format, date), url: null };
  }
  const fetched = await safeFetch(content.trim(), opts);
  return resolveFetched(fetched);
}

/** Types a fetched resource by its Content-Type, trusting the bytes over the header for PDF. */
export async function resolveFetched(fetched: FetchedResource): Promise<ResolvedContent> {
  const mime = fetched.contentType.split(";")[0]!.trim().toLowerCase();
  const url = fetched.url;

  if (startsWithPdfMagic(fetched.body) || mime === "application/pdf") {
    const pdf = await pdfToText(fetched.body);
    return { text: pdf.text, type: "pdf", format: "plain", title: pdf.title, url };
  }
  if (
    mime === "text/html" ||
    mime === "application/xhtml+xml" ||
    (mime === "" && looksLikeHtml(fetched.body))
  ) {
    const declared = /charset=/i.test(fetched.contentType) ? fetched.contentType : metaCharset(fetched.body);
    const page = htmlToText(decodeText(fetched.body, declared));
    return { text: page.text, type: "webpage", format: "plain", title: page.title, url };
  }
  if (isTextType(mime) || (mime === "" && isProbablyText(fetched.body))) {
    const text = decodeText(fetched.body, fetched.contentType);
    return { text, type: "text", format: detectFormat(text), title: titleFromUrl(url), url };
  }
  const media = mime.split("/")[0];
  if (media === "image" || media === "video" || media === "audio") {
    // No model here can describe an image or transcribe audio or video, so the document keeps a short
    // description (URL, title, type, size) that lexical search can still find.
    const title = titleFromUrl(url);
    const text = [
      `${media[0]!.toUpperCase()}${media.slice(1)}: ${title ?? url}`,
      `URL: ${url}`,
      `Content type: ${mime}`,
      `Size: ${formatBytes(fetched.body.byteLength)}`,
    ].join("\n");
    return { text, type: media, format: "plain", title, url };
  }
  throw new UnsupportedContentError(
    `${url}: content type ${mime === "" ? "(none)" : mime} is not supported; memctx reads HTML, PDF, plain text, markdown, and keeps images, audio and video by description`,
  );
}

function isTextType(mime: string): boolean {
  return (
    mime === "text/plain" ||
    mime === "text/markdown" ||
    mime === "text/x-markdown" ||
    mime === "text/csv" ||
    mime === "application/json" ||
    mime === "application/x-ndjson"
  );
}

function startsWithPdfMagic(body: Uint8Array): boolean {
  // "%PDF-"
  return (
    body.length >= 5 &&
    body[0] === 0x25 &&
    body[1] === 0x50 &&
    body[2] === 0x44 &&
    body[3] === 0x46 &&
    body[4] === 0x2d
  );
}

function looksLikeHtml(body: Uint8Array): boolean {
  const head = new TextDecoder().decode(body.subarray(0, 1024)).trimStart().toLowerCase();
  return head.startsWith("<!doctype html") || head.startsWith("<html");
}

function isProbablyText(body: Uint8Array): boolean {
  return !body.subarray(0, 4096).includes(0);
}

/** A page's own <meta charset> (or http-equiv Content-Type), for servers that send no charset. */
function metaCharset(body: Uint8Array): string {
  const head = new TextDecoder("latin1").decode(body.subarray(0, 2048));
  const charset = /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1];
  return charset ? `text/html; charset=${charset}` : "";
}

function decodeText(body: Uint8Array, contentType: string): string {
  const charset = /charset\s*=\s*"?([\w-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    // An unknown charset label: UTF-8 is the best guess.
    return new TextDecoder("utf-8").decode(body);
  }
}

/** Longest title made from a text's first line; a longer line is cut at a word. */
export const TEXT_TITLE_MAX = 80;

/**
 * Speakers that are roles, not people: an agent's transcript is "user" and "assistant" in every
 * conversation, so they name none of them.
 */
const ROLES = new Set(["user", "assistant", "system", "tool", "human", "ai", "bot", "agent", "model", "me"]);

/**
 * A title for text sent as is, so that lists and search results show something: a transcript's
 * speakers ("Conversation: Caroline, Melanie"), or, when they are only roles ("user",
 * "assistant"), its day ("Conversation of 8 May 2023", from its first turn's timestamp, else
 * `date`: the document's date, else when it was added); else the first line without Markdown heading marks, cut at a word to
 * TEXT_TITLE_MAX characters. Null for text with no words.
 */
export function textTitle(
  text: string,
  format: "plain" | "conversation",
  date?: string | null,
): string | null {
  if (format === "conversation") {
    const speakers = [
      ...new Set(
        conversationTurns(text)
          .map((t) => t.role)
          .filter((r) => r !== ""),
      ),
    ];
    const people = speakers.filter((s) => !ROLES.has(s.toLowerCase()));
    if (people.length > 0) {
      const shown = people.slice(0, 3).join(", ");
      return `Conversation: ${shown}${people.length > 3 ? ` and ${people.length - 3} more` : ""}`;
    }
    if (speakers.length > 0) {
      // The day its first turn says it was said ("[2026-03-14] user: ..."), else the given one.
      const said = /^\s*\[(\d{4}-\d{2}-\d{2})[^\]\n]{0,30}\]/.exec(text)?.[1];
      const day = parseDocumentDate(said ?? date);
      return day ? `Conversation of ${formatDay(day.year, day.month, day.day)}` : "Conversation";
    }
  }
  const line = text
    .split("\n")
    .map((l) =>
      l
        .replace(/^\s*#{1,6}\s+/, "")
        .replace(/\s+/g, " ")
        .trim(),
    )
    .find((l) => /[\p{L}\p{N}]/u.test(l));
  if (line === undefined) return null;
  if (line.length <= TEXT_TITLE_MAX) return line;
  const cut = line.slice(0, TEXT_TITLE_MAX - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > TEXT_TITLE_MAX / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, "")}…`;
}

/** The last path segment of a URL, decoded ("report%202023.txt" -> "report 2023.txt"), or null. */
function titleFromUrl(url: string): string | null {
  const segment = new URL(url).pathname.split("/").filter(Boolean).pop();
  if (segment === undefined) return null;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
