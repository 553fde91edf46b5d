import { createHash } from "node:crypto";

/** Bytes to text and content versions, shared by the providers that read files. */

/** `sha256:<hex>` of the content: the version when the source has no ETag or modification time. */
export function contentHash(data: Uint8Array | string): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

/** Decodes with the charset the Content-Type (or an HTML meta tag) names; UTF-8 otherwise. */
export function decodeText(bytes: Uint8Array, contentType = ""): string {
  const declared =
    /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1] ?? htmlMetaCharset(bytes, contentType);
  try {
    return new TextDecoder(declared ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

function htmlMetaCharset(bytes: Uint8Array, contentType: string): string | undefined {
  if (!/html/i.test(contentType)) return undefined;
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024));
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
}

/** The media type without parameters, lower case ("text/html"). */
export function mediaType(contentType: string): string {
  return contentType.split(";")[0]!.trim().toLowerCase();
}

export function isHtml(contentType: string): boolean {
  const type = mediaType(contentType);
  return type === "text/html" || type === "application/xhtml+xml";
}

export function isPdf(contentType: string, name = ""): boolean {
  return mediaType(contentType) === "application/pdf" || /\.pdf$/i.test(name);
}

const TEXT_EXTENSIONS =
  /\.(txt|md|mdx|markdown|rst|csv|tsv|json|jsonl|ya?ml|toml|xml|log|adoc|org|tex|ini|cfg)$/i;

/** Text a person would read as such (plain text, Markdown, CSV, JSON, XML...) by type or file name. */
export function isTextLike(contentType: string, name = ""): boolean {
  const type = mediaType(contentType);
  if (type.startsWith("text/") && type !== "text/html") return true;
  if (/^application\/(json|xml|x-yaml|yaml|toml|x-ndjson|ld\+json)$/.test(type)) return true;
  return TEXT_EXTENSIONS.test(name);
}

/** Binary content that slipped in as text (NUL bytes) is not a document. */
export function looksBinary(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 8000);
  return sample.includes(0);
}
