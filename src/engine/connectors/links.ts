/** Links of an HTML page, for the web crawler: resolved, normalized, deduplicated. */

/** An absolute http(s) URL without its fragment, or null for anything a crawler does not follow. */
export function normalizeUrl(href: string, base: string | URL): URL | null {
  const trimmed = decodeEntities(href.trim());
  if (trimmed === "" || trimmed.startsWith("#")) return null;
  let url: URL;
  try {
    url = new URL(trimmed, base);
  } catch {
    return null;
  }
  // mailto:, javascript:, tel:, data:, ftp: and the like are not pages.
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username !== "" || url.password !== "") return null;
  url.hash = "";
  return url;
}

/** Page meta robots: `noindex` keeps the page out, `nofollow` keeps its links out of the crawl. */
export function metaRobots(html: string): { noindex: boolean; nofollow: boolean } {
  let noindex = false;
  let nofollow = false;
  for (const tag of html.match(/<meta\b[^>]*>/gi) ?? []) {
    if (!/\bname\s*=\s*["']?(robots|memctx)["'\s>/]/i.test(tag)) continue;
    const content = /\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
    const value = (content?.[1] ?? content?.[2] ?? content?.[3] ?? "").toLowerCase();
    if (/\b(noindex|none)\b/.test(value)) noindex = true;
    if (/\b(nofollow|none)\b/.test(value)) nofollow = true;
  }
  return { noindex, nofollow };
}

/** `<a href>` and `<area href>` links in document order, resolved against `<base href>` or the page URL. */
export function extractLinks(html: string, pageUrl: string): URL[] {
  const withoutComments = html
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, "");
  const baseHref = /<base\b[^>]*\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(withoutComments);
  const base =
    normalizeUrl(baseHref?.[1] ?? baseHref?.[2] ?? baseHref?.[3] ?? "", pageUrl) ?? new URL(pageUrl);
  const seen = new Set<string>();
  const links: URL[] = [];
  for (const match of withoutComments.matchAll(
    /<(?:a|area)\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi,
  )) {
    const url = normalizeUrl(match[1] ?? match[2] ?? match[3] ?? "", base);
    if (url === null || seen.has(url.href)) continue;
    seen.add(url.href);
    links.push(url);
  }
  return links;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&amp;/gi, "&")
    .replace(/&#x([0-9a-f]+);/gi, (entity, hex: string) => codePoint(Number.parseInt(hex, 16), entity))
    .replace(/&#(\d+);/g, (entity, dec: string) => codePoint(Number(dec), entity))
    .replace(/&quot;/gi, '"')
    .replace(/&apos;/gi, "'")
    .replace(/&lt;/gi, "<")
    .replace(/&gt;/gi, ">");
}

function codePoint(value: number, entity: string): string {
  return value > 0 && value <= 0x10ffff ? String.fromCodePoint(value) : entity;
}
