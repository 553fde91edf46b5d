import type { ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  conditionalHeaders,
  createWebCrawler,
} from "../../../src/engine/connectors/providers/web-crawler.js";
import { InputError } from "../../../src/engine/errors.js";
import { type HttpServer, startHttpServer } from "../../support/http-server.js";
import { collect, documentsOf, makePdf, syncContext, versionsOf } from "./helpers.js";

const crawler = createWebCrawler();

const html = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a></nav><main>${body}</main></body></html>`;

interface Page {
  body: string | Buffer;
  type: string;
  etag?: string;
  lastModified?: string;
}

let site: HttpServer;
let offsite: HttpServer;
let pages: Map<string, Page>;

beforeEach(async () => {
  offsite = await startHttpServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(html("Elsewhere", "<p>not on the site</p>"));
  });
  pages = new Map<string, Page>([
    [
      "/",
      {
        type: "text/html; charset=utf-8",
        etag: '"home-1"',
        body: html(
          "Home",
          `<h1>Welcome</h1><p>The home page of the test site.</p>
           <a href="/a">A</a> <a href="b?x=1#section">B</a>
           <a href="/private/secret.html">secret</a> <a href="/private/ok.html">ok</a>
           <a href="mailto:someone@example.com">mail</a> <a href="javascript:void(0)">js</a>
           <a href="OFFSITE/page">elsewhere</a> <a href="/redirect">moved</a>
           <a href="/big.pdf">big</a> <a href="/doc.pdf">pdf</a> <a href="/logo.png">logo</a>
           <a href="/notes.txt">notes</a> <a href="/loop1">loop</a> <a href="/broken">broken</a>`,
        ),
      },
    ],
    [
      "/a",
      {
        type: "text/html",
        etag: '"a-1"',
        body: html("Page A", `<p>Alpha content.</p><a href="/">home</a><a href="/a#top">self</a>`),
      },
    ],
    [
      "/b?x=1",
      {
        type: "text/html",
        lastModified: "Wed, 21 Oct 2015 07:28:00 GMT",
        body: html("Page B", "<p>Bravo content.</p>"),
      },
    ],
    [
      "/private/ok.html",
      { type: "text/html", etag: '"ok-1"', body: html("Allowed", "<p>Explicitly allowed.</p>") },
    ],
    ["/private/secret.html", { type: "text/html", body: html("Secret", "<p>must not be crawled</p>") }],
    [
      "/c",
      {
        type: "text/html",
        etag: '"c-1"',
        body: html("Page C", "<p>Charlie, reached through a redirect.</p>"),
      },
    ],
    [
      "/loop1",
      { type: "text/html", etag: '"l1"', body: html("Loop 1", `<p>one</p><a href="/loop2">next</a>`) },
    ],
    [
      "/loop2",
      { type: "text/html", etag: '"l2"', body: html("Loop 2", `<p>two</p><a href="/loop1">back</a>`) },
    ],
    ["/doc.pdf", { type: "application/pdf", etag: '"pdf-1"', body: makePdf("Portable document text") }],
    ["/notes.txt", { type: "text/plain; charset=utf-8", body: "Plain notes without a validator." }],
  ]);
  site = await startHttpServer((req, res) => {
    const path = req.url ?? "/";
    if (path === "/robots.txt") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(
        "# test robots\nUser-agent: othercrawler\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\nAllow: /private/ok.html$\n",
      );
      return;
    }
    if (path === "/start") return redirect(res, "/");
    if (path === "/redirect") return redirect(res, "/c");
    if (path === "/big.pdf") {
      // Declares 60 MB and sends a little: the crawler must refuse on the header.
      res.writeHead(200, { "content-type": "application/pdf", "content-length": String(60 * 1024 * 1024) });
      res.write(Buffer.alloc(1024));
      return;
    }
    const page = pages.get(path);
    if (!page) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
      return;
    }
    const body = typeof page.body === "string" ? page.body.replace("OFFSITE", offsite.url) : page.body;
    if (page.etag && req.headers["if-none-match"] === page.etag) return notModified(res);
    if (page.lastModified && req.headers["if-modified-since"] === page.lastModified) return notModified(res);
    res.writeHead(200, {
      "content-type": page.type,
      ...(page.etag ? { etag: page.etag } : {}),
      ...(page.lastModified ? { "last-modified": page.lastModified } : {}),
    });
    res.end(body);
  });
});

afterEach(async () => {
  await site.close();
  await offsite.close();
});

function redirect(res: ServerResponse, to: string) {
  res.writeHead(302, { location: to });
  res.end();
}
function notModified(res: ServerResponse) {
  res.writeHead(304);
  res.end();
}

describe("web-crawler provider", () => {
  it("crawls exactly the site's allowed pages breadth-first, as documents carrying their URLs", async () => {
    const items = await collect(crawler.sync(syncContext({ config: { startUrl: `${site.url}/start` } })));
    const docs = documentsOf(items);
    const u = (p: string) => `${site.url}${p}`;
    expect(docs.map((d) => d.externalId)).toEqual([
      u("/"),
      u("/a"),
      u("/b?x=1"),
      u("/private/ok.html"),
      u("/c"),
      u("/doc.pdf"),
      u("/notes.txt"),
      u("/loop1"),
      u("/loop2"),
    ]);
    const home = docs[0]!;
    expect(home).toMatchObject({ type: "webpage", title: "Home", url: u("/"), version: '"home-1"' });
    expect(home.content).toContain("The home page of the test site.");
    expect(home.content).not.toContain("<");
    expect(docs.find((d) => d.externalId === u("/c"))!.content).toContain(
      "Charlie, reached through a redirect.",
    );
    expect(docs.find((d) => d.externalId === u("/b?x=1"))!.version).toBe("Wed, 21 Oct 2015 07:28:00 GMT");
    const pdf = docs.find((d) => d.externalId === u("/doc.pdf"))!;
    expect(pdf.type).toBe("pdf");
    expect(pdf.content).toContain("Portable document text");
    const notes = docs.find((d) => d.externalId === u("/notes.txt"))!;
    expect(notes).toMatchObject({ type: "text", content: "Plain notes without a validator." });
    expect(notes.version).toMatch(/^sha256:[0-9a-f]{64}$/);

    // The 50 MB file is skipped with a reason; robots-disallowed, off-site and non-page links are never requested.
    expect(items).toContainEqual({
      kind: "skipped",
      item: u("/big.pdf"),
      reason: expect.stringContaining("larger than"),
    });
    const requested = site.requests.map((r) => r.path);
    expect(requested).not.toContain("/private/secret.html");
    expect(requested).not.toContain("/logo.png");
    expect(offsite.requests).toHaveLength(0);
    // Each page once, even through the link loop and the self link.
    expect(requested.filter((p) => p === "/loop1")).toHaveLength(1);
    expect(requested.filter((p) => p === "/a")).toHaveLength(1);
    // A broken link is not a document and not a failure of the sync.
    expect(items.filter((i) => i.kind === "failed")).toEqual([]);
  });

  it("stops at documentLimit", async () => {
    const items = await collect(
      crawler.sync(syncContext({ config: { startUrl: site.url }, documentLimit: 3 })),
    );
    expect(documentsOf(items).map((d) => d.externalId)).toEqual([
      `${site.url}/`,
      `${site.url}/a`,
      `${site.url}/b?x=1`,
    ]);
    expect(site.requests.map((r) => r.path)).not.toContain("/loop2");
  });

  it("re-syncs with conditional requests: unchanged pages answer 304, removed pages drop out", async () => {
    const first = await collect(crawler.sync(syncContext({ config: { startUrl: site.url } })));
    const previous = versionsOf(first);
    pages.delete("/c");
    pages.set("/a", { ...pages.get("/a")!, etag: '"a-2"', body: html("Page A", "<p>Alpha, edited.</p>") });
    site.requests.length = 0;

    const second = await collect(crawler.sync(syncContext({ config: { startUrl: site.url }, previous })));
    const docs = documentsOf(second);
    const byId = new Map(docs.map((d) => [d.externalId, d]));
    expect(byId.has(`${site.url}/c`)).toBe(false);
    expect(byId.get(`${site.url}/a`)).toMatchObject({
      version: '"a-2"',
      content: expect.stringContaining("Alpha, edited."),
    });
    // Unchanged: same version as before, nothing re-read (content empty), and the server answered 304.
    for (const path of ["/", "/b?x=1", "/loop1", "/loop2", "/doc.pdf", "/private/ok.html"]) {
      const doc = byId.get(`${site.url}${path}`)!;
      expect(doc.version).toBe(previous.get(`${site.url}${path}`));
      expect(doc.content).toBe("");
    }
    const home = site.requests.find((r) => r.path === "/")!;
    expect(home.headers["if-none-match"]).toBe('"home-1"');
    const b = site.requests.find((r) => r.path === "/b?x=1")!;
    expect(b.headers["if-modified-since"]).toBe("Wed, 21 Oct 2015 07:28:00 GMT");
    // A content-hash version cannot be sent; the page is read again and keeps its hash.
    expect(byId.get(`${site.url}/notes.txt`)!.version).toBe(previous.get(`${site.url}/notes.txt`));
  });

  it("refuses a config without a usable startUrl, naming the field", () => {
    expect(() => crawler.validateConfig({})).toThrow(InputError);
    expect(() => crawler.validateConfig({})).toThrow(/config\.startUrl/);
    expect(() => crawler.validateConfig({ startUrl: "ftp://example.com/" })).toThrow(
      /config\.startUrl: must be an http/,
    );
    expect(crawler.validateConfig({ startUrl: "https://example.com" })).toEqual({
      startUrl: "https://example.com/",
    });
  });

  it("fails the sync (rather than reporting an empty site) when the start page cannot be read", async () => {
    pages.delete("/");
    await expect(collect(crawler.sync(syncContext({ config: { startUrl: site.url } })))).rejects.toThrow(
      /start URL/,
    );
  });

  it("sends the validator that matches the version kind", () => {
    expect(conditionalHeaders('"abc"')).toEqual({ "if-none-match": '"abc"' });
    expect(conditionalHeaders('W/"abc"')).toEqual({ "if-none-match": 'W/"abc"' });
    expect(conditionalHeaders("Wed, 21 Oct 2015 07:28:00 GMT")).toEqual({
      "if-modified-since": "Wed, 21 Oct 2015 07:28:00 GMT",
    });
    expect(conditionalHeaders(`sha256:${"0".repeat(64)}`)).toEqual({});
  });
});
