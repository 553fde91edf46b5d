import type { Metadata } from "../../../api/index.js";
import { InputError } from "../../errors.js";
import { FetchRefusedError } from "../../ingest/fetch.js";
import { htmlToText } from "../../ingest/html.js";
import { pdfToText } from "../../ingest/pdf.js";
import { asObject, httpUrl, requiredString } from "../config.js";
import { ConnectorApiError } from "../errors.js";
import { extractLinks, metaRobots, normalizeUrl } from "../links.js";
import { RobotsRules } from "../robots.js";
import { contentHash, decodeText, isHtml, isPdf, isTextLike, mediaType } from "../text.js";
import type { ConnectorProvider, SyncContext, SyncItem } from "../types.js";
import { unchangedDocument } from "../types.js";

/**
 * Crawls one site breadth-first from `config.startUrl`: same origin as the start page (after its
 * redirects), robots.txt honoured, each HTML page a `webpage` document, linked PDFs `pdf`
 * documents, linked text files `text` documents; anything else is skipped with a reason.
 * Pages known from the previous sync are revisited with If-None-Match / If-Modified-Since, so an
 * unchanged page costs a 304 and a removed page (404) drops out of the output.
 */

/** Links to these are never fetched: they are not pages. */
const NOT_A_PAGE =
  /\.(png|jpe?g|gif|webp|svg|ico|bmp|tiff?|mp3|mp4|m4a|wav|ogg|webm|mov|avi|zip|gz|tgz|bz2|xz|7z|rar|tar|exe|dmg|iso|woff2?|ttf|eot|css|js|mjs|map)$/i;

export function validateWebCrawlerConfig(config: unknown): Record<string, unknown> {
  const obj = asObject(config, "config");
  const startUrl = httpUrl(requiredString(obj, "startUrl"), "config.startUrl");
  const out: Record<string, unknown> = { ...obj, startUrl: new URL(startUrl).href };
  if (obj.maxDepth !== undefined) {
    if (!Number.isInteger(obj.maxDepth) || (obj.maxDepth as number) < 0) {
      throw new InputError("config.maxDepth", "must be a non-negative integer");
    }
  }
  return out;
}

export function createWebCrawler(): ConnectorProvider {
  return {
    provider: "web-crawler",
    kind: "config",
    validateConfig: validateWebCrawlerConfig,
    sync: crawl,
  };
}

interface QueueEntry {
  url: URL;
  depth: number;
}

async function* crawl(ctx: SyncContext): AsyncGenerator<SyncItem> {
  const config = validateWebCrawlerConfig(ctx.config);
  const startUrl = new URL(config.startUrl as string);
  const maxDepth = typeof config.maxDepth === "number" ? config.maxDepth : Number.POSITIVE_INFINITY;
  // Bounds the requests spent on links that turn out not to be documents.
  const maxRequests = ctx.documentLimit * 2 + 20;

  let robots = await fetchRobots(ctx, startUrl.origin);
  if (!robots.isAllowed(startUrl)) {
    yield { kind: "skipped", item: startUrl.href, reason: "robots.txt disallows the start URL" };
    return;
  }

  // The start page decides the site: its origin after redirects.
  const start = await fetchPage(ctx, startUrl);
  if (start.kind === "error") {
    throw new ConnectorApiError(
      `web-crawler: the start URL ${startUrl.href} failed: ${start.reason}`,
      start.status,
    );
  }
  const site = new URL(start.url).origin;
  if (site !== startUrl.origin) {
    robots = await fetchRobots(ctx, site);
    if (!robots.isAllowed(new URL(start.url))) {
      yield { kind: "skipped", item: start.url, reason: "robots.txt disallows the start URL" };
      return;
    }
  }

  const seen = new Set<string>([startUrl.href, start.url]);
  const emitted = new Set<string>();
  const queue: QueueEntry[] = [];
  let requests = 1;
  let documents = 0;

  const enqueue = (url: URL, depth: number) => {
    if (url.origin !== site || seen.has(url.href) || depth > maxDepth) return;
    seen.add(url.href);
    if (NOT_A_PAGE.test(url.pathname)) return;
    if (!robots.isAllowed(url)) return;
    queue.push({ url, depth });
  };

  const handle = async function* (page: FetchedPage, depth: number): AsyncGenerator<SyncItem> {
    if (page.kind === "error") {
      // A page that is gone is simply absent (the engine deletes it); other trouble is reported.
      if (page.status === 404 || page.status === 410) return;
      yield { kind: page.refused ? "skipped" : "failed", item: page.requested, reason: page.reason };
      return;
    }
    const url = new URL(page.url);
    if (url.origin !== site) {
      yield { kind: "skipped", item: page.requested, reason: `redirects off the site to ${url.origin}` };
      return;
    }
    if (emitted.has(url.href)) return;
    if (url.href !== page.requested && !robots.isAllowed(url)) {
      yield {
        kind: "skipped",
        item: page.requested,
        reason: `redirects to ${url.href}, which robots.txt disallows`,
      };
      return;
    }
    emitted.add(url.href);
    for (const link of page.links) enqueue(link, depth + 1);
    if (page.item === null) return;
    if (documents >= ctx.documentLimit) return;
    documents++;
    yield page.item;
  };

  // Previously synced pages are revisited even when the pages linking to them answer 304.
  for (const externalId of ctx.previous.keys()) {
    const url = normalizeUrl(externalId, startUrl);
    if (url !== null) enqueue(url, 1);
  }
  yield* handle(start, 0);
  while (queue.length > 0 && documents < ctx.documentLimit && requests < maxRequests) {
    ctx.signal.throwIfAborted();
    const next = queue.shift()!;
    requests++;
    yield* handle(await fetchPage(ctx, next.url), next.depth);
  }
}

async function fetchRobots(ctx: SyncContext, origin: string): Promise<RobotsRules> {
  const url = `${origin}/robots.txt`;
  let response: Response;
  try {
    response = await ctx.fetch(url, { headers: { accept: "text/plain" }, signal: ctx.signal });
  } catch (error) {
    throw new ConnectorApiError(`web-crawler: cannot read ${url}: ${(error as Error).message}`);
  }
  // RFC 9309 2.3.1: "unavailable" (4xx) allows everything; "unreachable" (5xx) stops the crawl.
  if (response.status >= 400 && response.status < 500) return RobotsRules.allowAll();
  if (!response.ok) {
    throw new ConnectorApiError(
      `web-crawler: ${url} answered HTTP ${response.status}; not crawling`,
      response.status,
    );
  }
  return RobotsRules.parse(await response.text());
}

type FetchedPage =
  | { kind: "page"; requested: string; url: string; links: URL[]; item: SyncItem | null }
  | { kind: "error"; requested: string; status: number | null; refused: boolean; reason: string };

async function fetchPage(ctx: SyncContext, url: URL): Promise<FetchedPage> {
  const requested = url.href;
  const previous = ctx.previous.get(requested);
  const headers: Record<string, string> = {};
  if (previous !== undefined) Object.assign(headers, conditionalHeaders(previous));
  let response: Response;
  try {
    response = await ctx.fetch(requested, { headers, signal: ctx.signal });
  } catch (error) {
    ctx.signal.throwIfAborted();
    const refused = error instanceof FetchRefusedError;
    return { kind: "error", requested, status: null, refused, reason: (error as Error).message };
  }
  const finalUrl = normalizeUrl(response.url || requested, requested)?.href ?? requested;
  if (response.status === 304 && previous !== undefined) {
    return {
      kind: "page",
      requested,
      url: finalUrl,
      links: [],
      item: unchangedDocument(finalUrl, previous, {
        url: finalUrl,
        type: "webpage",
        metadata: { url: finalUrl },
      }),
    };
  }
  if (!response.ok) {
    return {
      kind: "error",
      requested,
      status: response.status,
      refused: false,
      reason: `HTTP ${response.status}`,
    };
  }
  const contentType = response.headers.get("content-type") ?? "";
  const bytes = new Uint8Array(await response.arrayBuffer());
  const version = response.headers.get("etag") ?? response.headers.get("last-modified") ?? contentHash(bytes);
  const metadata: Metadata = { url: finalUrl, contentType: mediaType(contentType) };
  const base = { kind: "document" as const, externalId: finalUrl, url: finalUrl, metadata, version };

  if (isHtml(contentType) || (contentType === "" && /^\s*</.test(decodeText(bytes.subarray(0, 512))))) {
    const html = decodeText(bytes, contentType || "text/html");
    const robots = metaRobots(html);
    const links = robots.nofollow ? [] : extractLinks(html, finalUrl);
    if (robots.noindex) {
      return {
        kind: "page",
        requested,
        url: finalUrl,
        links,
        item: {
          kind: "skipped",
          item: finalUrl,
          reason: "the page asks not to be indexed (meta robots noindex)",
        },
      };
    }
    const { title, text } = htmlToText(html);
    return {
      kind: "page",
      requested,
      url: finalUrl,
      links,
      item: { ...base, content: text, title, type: "webpage" },
    };
  }
  if (isPdf(contentType, new URL(finalUrl).pathname)) {
    try {
      const pdf = await pdfToText(bytes);
      return {
        kind: "page",
        requested,
        url: finalUrl,
        links: [],
        item: { ...base, content: pdf.text, title: pdf.title, type: "pdf" },
      };
    } catch (error) {
      return {
        kind: "error",
        requested,
        status: null,
        refused: false,
        reason: `unreadable PDF: ${(error as Error).message}`,
      };
    }
  }
  if (isTextLike(contentType, new URL(finalUrl).pathname)) {
    const text = decodeText(bytes, contentType);
    return {
      kind: "page",
      requested,
      url: finalUrl,
      links: [],
      item: { ...base, content: text, title: null, type: "text" },
    };
  }
  return {
    kind: "page",
    requested,
    url: finalUrl,
    links: [],
    item: {
      kind: "skipped",
      item: finalUrl,
      reason: `unsupported content type ${mediaType(contentType) || "(none)"}`,
    },
  };
}

/** The request headers that make an unchanged page answer 304. */
export function conditionalHeaders(version: string): Record<string, string> {
  if (version.startsWith("sha256:")) return {};
  if (/^(W\/)?"/.test(version)) return { "if-none-match": version };
  if (!Number.isNaN(Date.parse(version))) return { "if-modified-since": version };
  return {};
}
