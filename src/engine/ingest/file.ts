import type { DocumentType } from "../../api/index.js";
import type { FileKindName, StoredFile } from "../store/document-files.js";
import { detectFormat } from "../text/conversation.js";
import { type ResolvedContent, textTitle } from "./content.js";
import { htmlToText } from "./html.js";
import { pdfToText } from "./pdf.js";
import { ArchiveLimitError, type InflateLimits, inflateLimits, openZip, readDirectory } from "./zip.js";

/**
 * What an uploaded file is, as far as memctx reads it: `kind` says how its text is made, `type` is
 * the document's API type, `mimeType` the type it is stored under.
 */
export interface FileKind {
  kind: FileKindName;
  type: DocumentType;
  mimeType: string;
}

/** A file memctx neither reads nor keeps: the caller is told which types it takes. */
export class UnsupportedFileError extends Error {
  override name = "UnsupportedFileError";
}

const DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
export const SUPPORTED_FILES =
  "text, Markdown, HTML, PDF and Word (.docx) are read; images, audio and video are kept as documents without memories";

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) =>
  b.length >= at + sig.length && sig.every((x, i) => b[at + i] === x);
const ascii = (b: Uint8Array, from: number, to: number) =>
  String.fromCharCode(...b.subarray(from, Math.min(to, b.length)));

/** The binary formats recognised by their first bytes (magic numbers), with their MIME type. */
function sniff(b: Uint8Array): { kind: FileKindName; mimeType: string } | undefined {
  if (ascii(b, 0, 5) === "%PDF-") return { kind: "pdf", mimeType: "application/pdf" };
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    return { kind: "image", mimeType: "image/png" };
  if (startsWith(b, [0xff, 0xd8, 0xff])) return { kind: "image", mimeType: "image/jpeg" };
  if (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a")
    return { kind: "image", mimeType: "image/gif" };
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP")
    return { kind: "image", mimeType: "image/webp" };
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WAVE")
    return { kind: "audio", mimeType: "audio/wav" };
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "AVI ")
    return { kind: "video", mimeType: "video/x-msvideo" };
  if (ascii(b, 0, 2) === "BM" && b.length > 14) return { kind: "image", mimeType: "image/bmp" };
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a]))
    return { kind: "image", mimeType: "image/tiff" };
  if (ascii(b, 0, 3) === "ID3" || (b.length > 1 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0))
    return { kind: "audio", mimeType: "audio/mpeg" };
  if (ascii(b, 0, 4) === "fLaC") return { kind: "audio", mimeType: "audio/flac" };
  if (ascii(b, 0, 4) === "OggS") return { kind: "audio", mimeType: "audio/ogg" };
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return { kind: "video", mimeType: "video/webm" };
  if (ascii(b, 4, 8) === "ftyp") {
    const brand = ascii(b, 8, 12);
    if (brand.startsWith("M4A") || brand.startsWith("M4B")) return { kind: "audio", mimeType: "audio/mp4" };
    if (brand === "heic" || brand === "heix" || brand === "avif" || brand === "mif1")
      return { kind: "image", mimeType: brand === "avif" ? "image/avif" : "image/heic" };
    return { kind: "video", mimeType: brand === "qt  " ? "video/quicktime" : "video/mp4" };
  }
  // A Word document is a ZIP whose central directory names word/document.xml (names are stored plainly).
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) {
    const names = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    if (names.includes("word/document.xml")) return { kind: "docx", mimeType: DOCX_MIME };
    return undefined;
  }
  return undefined;
}

const EXTENSIONS: Record<string, string> = {
  md: "text/markdown",
  markdown: "text/markdown",
  html: "text/html",
  htm: "text/html",
  txt: "text/plain",
  csv: "text/csv",
  json: "application/json",
  pdf: "application/pdf",
  docx: DOCX_MIME,
};

/** The legacy `fileType` field names a document type; these map to a MIME type. */
const FILE_TYPES: Record<string, string> = {
  pdf: "application/pdf",
  text: "text/plain",
  markdown: "text/markdown",
  webpage: "text/html",
  html: "text/html",
  docx: DOCX_MIME,
};

const TYPE_OF_KIND: Record<FileKindName, DocumentType> = {
  pdf: "pdf",
  docx: "docx",
  html: "webpage",
  markdown: "text",
  text: "text",
  image: "image",
  audio: "audio",
  video: "video",
};

/** Text has no NUL byte and decodes as UTF-8 (a binary format not recognised above does not). */
function isText(b: Uint8Array): boolean {
  const head = b.subarray(0, 64 * 1024);
  if (head.includes(0)) return false;
  try {
    // A multi-byte character cut at the end of the sample is not an error.
    new TextDecoder("utf-8", { fatal: true }).decode(head.length < b.length ? head.subarray(0, -4) : head);
    return true;
  } catch {
    return false;
  }
}

function looksLikeHtml(b: Uint8Array): boolean {
  const head = new TextDecoder().decode(b.subarray(0, 1024)).trimStart().toLowerCase();
  return head.startsWith("<!doctype html") || head.startsWith("<html");
}

/**
 * The kind of an uploaded file: its bytes first (magic numbers of binary formats), then what the
 * caller declared (`fileType`, `mimeType`, the part's Content-Type, then the file name's extension)
 * for text, which has no signature. Throws UnsupportedFileError for a type memctx cannot take.
 */
export function detectFile(
  bytes: Uint8Array,
  declared: {
    mimeType?: string | undefined;
    fileType?: string | undefined;
    name?: string | null | undefined;
  },
): FileKind {
  const sniffed = sniff(bytes);
  if (sniffed) return { ...sniffed, type: TYPE_OF_KIND[sniffed.kind] };
  const ext = declared.name?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  const candidates = [
    declared.fileType ? FILE_TYPES[declared.fileType.toLowerCase()] : undefined,
    declared.mimeType,
    ext ? EXTENSIONS[ext] : undefined,
  ]
    .map((m) => m?.split(";")[0]?.trim().toLowerCase())
    .filter((m): m is string => !!m && m !== "application/octet-stream");
  const mime = candidates[0] ?? "";
  const media = mime.split("/")[0];
  if (isText(bytes)) {
    if (mime === "text/html" || mime === "application/xhtml+xml" || (mime === "" && looksLikeHtml(bytes)))
      return { kind: "html", type: "webpage", mimeType: "text/html" };
    if (mime === "text/markdown" || mime === "text/x-markdown")
      return { kind: "markdown", type: "text", mimeType: "text/markdown" };
    return {
      kind: "text",
      type: "text",
      mimeType: mime.startsWith("text/") || mime.includes("json") ? mime : "text/plain",
    };
  }
  // A media format whose signature is not known here: the declared type is trusted (it is only kept).
  if (media === "image" || media === "audio" || media === "video") {
    return { kind: media, type: media, mimeType: mime };
  }
  throw new UnsupportedFileError(
    `the file's type is not supported (its bytes are not a known format${mime ? `, declared ${mime}` : ""}); ${SUPPORTED_FILES}`,
  );
}

/** A Word document's parts that are read for its text: its XML (pictures are not inflated). */
export const isDocxXml = (name: string) => /\.(xml|rels)$/i.test(name);

/**
 * Refuses, as it arrives, a file whose declared content is past the limits that its conversion
 * would stop at (a Word document's archive: ArchiveLimitError). A damaged archive passes: its
 * conversion says what is wrong with it; one whose directory lies is stopped while it inflates.
 */
export function checkFileLimits(bytes: Uint8Array, kind: FileKindName): void {
  if (kind !== "docx") return;
  try {
    readDirectory(bytes, inflateLimits(), isDocxXml);
  } catch (err) {
    if (err instanceof ArchiveLimitError) throw err;
  }
}

/** A stored file to the text that is chunked and searched; media get a short description instead. */
export async function resolveFile(
  file: StoredFile,
  limits: InflateLimits = inflateLimits(),
): Promise<ResolvedContent> {
  const name = file.name;
  switch (file.kind) {
    case "pdf": {
      const pdf = await pdfToText(file.bytes);
      // The name the file was uploaded under is the user's; a PDF's own Title is what its
      // software wrote there (often "Microsoft Word - draft3.docx" or a template's), used only
      // when the upload came without a name.
      return { text: pdf.text, type: "pdf", format: "plain", title: name ?? pdf.title, url: null };
    }
    case "docx": {
      const mammoth = (await import("mammoth")).default;
      // mammoth reads an archive it is handed (`file`) instead of opening the bytes with JSZip,
      // which would inflate any entry whole, whatever its directory says.
      const out = await Promise.resolve()
        .then(() =>
          mammoth.extractRawText({ file: openZip(file.bytes, limits, isDocxXml) } as unknown as {
            buffer: Buffer;
          }),
        )
        .catch((error: unknown) => {
          // A limit's message names the limit: it is not a damaged file.
          if (error instanceof ArchiveLimitError) throw error;
          throw new Error(
            `not a readable Word document: ${error instanceof Error ? error.message : String(error)}`,
          );
        });
      const text = out.value.replace(/\n{3,}/g, "\n\n").trim();
      return { text, type: "docx", format: "plain", title: textTitle(text, "plain") ?? name, url: null };
    }
    case "html": {
      const page = htmlToText(new TextDecoder().decode(file.bytes));
      return { text: page.text, type: "webpage", format: "plain", title: page.title ?? name, url: null };
    }
    case "markdown":
    case "text": {
      const text = new TextDecoder().decode(file.bytes);
      const format = detectFormat(text);
      return { text, type: "text", format, title: textTitle(text, format) ?? name, url: null };
    }
    default: {
      // No model here can describe an image or transcribe audio: the document keeps what is known
      // of the file (name, type, size), which search finds, and no memories are made from it.
      const media = file.kind;
      const text = [
        `${media[0]!.toUpperCase()}${media.slice(1)} file: ${name ?? "(no name)"}`,
        `Content type: ${file.mimeType}`,
        `Size: ${file.bytes.byteLength} bytes`,
      ].join("\n");
      return { text, type: media, format: "plain", title: name, url: null };
    }
  }
}

/** Documents of these types hold a description of a file, not content to draw memories from. */
export const MEDIA_TYPES: ReadonlySet<string> = new Set(["image", "audio", "video"]);
