import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  resolveContent,
  TEXT_TITLE_MAX,
  textTitle,
  UnsupportedContentError,
} from "../../../src/engine/ingest/content.js";
import { FetchRefusedError } from "../../../src/engine/ingest/fetch.js";
import { PDF_PAGE_BREAK } from "../../../src/engine/ingest/pdf.js";
import { type HttpServer, startHttpServer } from "../../support/http-server.js";
import { makePdf } from "./pdf-fixture.js";

const PAGE = `<!doctype html>
<html><head><title>Berlin &amp; Beyond</title>
<style>body { color: red }</style>
<script>window.secretTracking = "do-not-index";</script></head>
<body>
<header><a href="/">Home</a> | <a href="/about">About</a></header>
<nav><ul><li>Menu item one</li><li>Menu item two</li></ul></nav>
<main><article>
<h1>Moving to Berlin</h1>
<p>Caroline moved to <a href="https://en.wikipedia.org/wiki/Berlin">Berlin</a> in May 2023.</p>
<p>She works as a counselor &mdash; and loves the parks.</p>
<h2>Neighbourhoods</h2>
<p>Kreuzberg is her favourite.</p>
</article></main>
<footer>Copyright 2023 Cookie settings</footer>
<script>console.log("tracking")</script>
</body></html>`;

const PDF = makePdf(
  [
    ["Quarterly report", "Revenue grew by 12 percent (year over year)."],
    ["Second page: the outlook is stable."],
  ],
  "Q3 Report",
);

let server: HttpServer;
beforeAll(async () => {
  server = await startHttpServer((req, res) => {
    const routes: Record<string, [string, string | Uint8Array]> = {
      "/page.html": ["text/html; charset=utf-8", PAGE],
      "/report.pdf": ["application/pdf", PDF],
      "/download": ["application/octet-stream", PDF],
      "/notes.txt": ["text/plain; charset=utf-8", "Plain notes about a trip."],
      "/readme.md": ["text/markdown", "# Title\n\nSome *markdown* text."],
      "/chat.txt": ["text/plain", "user: I moved to Berlin\nassistant: How do you like it?\nuser: A lot."],
      "/photo.jpg": ["image/jpeg", new Uint8Array(2048)],
      "/clip.mp4": ["video/mp4", new Uint8Array(10)],
      "/song.mp3": ["audio/mpeg", new Uint8Array(10)],
      "/app.zip": ["application/zip", new Uint8Array(10)],
      "/latin1.html": [
        "text/html",
        Buffer.from(
          '<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e</p></body></html>',
          "latin1",
        ),
      ],
    };
    const route = routes[req.url ?? ""];
    if (!route) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": route[0] });
    res.end(route[1]);
  });
});
afterAll(() => server.close());

const allow = { allowPrivateNetwork: true };

describe("resolveContent for URLs", () => {
  it("turns an HTML page into its title and readable text, without scripts, styles or navigation", async () => {
    const resolved = await resolveContent(`${server.url}/page.html`, allow);
    expect(resolved.type).toBe("webpage");
    expect(resolved.format).toBe("plain");
    expect(resolved.title).toBe("Berlin & Beyond");
    expect(resolved.url).toBe(`${server.url}/page.html`);
    expect(resolved.text).toContain("Moving to Berlin");
    expect(resolved.text).toContain("Caroline moved to Berlin in May 2023.");
    expect(resolved.text).toContain("She works as a counselor — and loves the parks.");
    expect(resolved.text).toContain("Neighbourhoods");
    for (const noise of [
      "secretTracking",
      "tracking",
      "color: red",
      "Menu item",
      "Cookie settings",
      "About",
      "wikipedia",
    ]) {
      expect(resolved.text).not.toContain(noise);
    }
    // Headings and paragraphs stay separate blocks.
    expect(resolved.text).toMatch(/Moving to Berlin\n+Caroline moved/);
  });

  it("decodes a page in the charset its <meta> declares when the header names none", async () => {
    const resolved = await resolveContent(`${server.url}/latin1.html`, allow);
    expect(resolved.title).toBe("Café");
    expect(resolved.text).toBe("Crème brûlée");
  });

  it("reads the text of a PDF, page by page, with its title", async () => {
    const resolved = await resolveContent(`${server.url}/report.pdf`, allow);
    expect(resolved.type).toBe("pdf");
    expect(resolved.title).toBe("Q3 Report");
    expect(resolved.text).toContain("Revenue grew by 12 percent (year over year).");
    expect(resolved.text).toContain(`${PDF_PAGE_BREAK}Second page: the outlook is stable.`);
  });

  it("recognises a PDF by its %PDF- magic whatever the Content-Type says", async () => {
    const resolved = await resolveContent(`${server.url}/download`, allow);
    expect(resolved.type).toBe("pdf");
    expect(resolved.text).toContain("Quarterly report");
  });

  it("keeps plain text and markdown as text, and detects a transcript served as text", async () => {
    const notes = await resolveContent(`${server.url}/notes.txt`, allow);
    expect(notes).toMatchObject({ type: "text", format: "plain", text: "Plain notes about a trip." });
    const readme = await resolveContent(`${server.url}/readme.md`, allow);
    expect(readme).toMatchObject({ type: "text", text: "# Title\n\nSome *markdown* text." });
    const chat = await resolveContent(`${server.url}/chat.txt`, allow);
    expect(chat.format).toBe("conversation");
  });

  it("keeps images, video and audio as a short description, typed by their media", async () => {
    const photo = await resolveContent(`${server.url}/photo.jpg`, allow);
    expect(photo.type).toBe("image");
    expect(photo.title).toBe("photo.jpg");
    expect(photo.text).toContain(`${server.url}/photo.jpg`);
    expect(photo.text).toContain("image/jpeg");
    expect(photo.text).toContain("2.0 KB");
    expect((await resolveContent(`${server.url}/clip.mp4`, allow)).type).toBe("video");
    expect((await resolveContent(`${server.url}/song.mp3`, allow)).type).toBe("audio");
  });

  it("refuses a content type it cannot read, naming the type", async () => {
    const error = await resolveContent(`${server.url}/app.zip`, allow).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedContentError);
    expect(error).toBeInstanceOf(FetchRefusedError);
    expect((error as Error).message).toContain("application/zip is not supported");
  });

  it("refuses a loopback URL unless private networks are allowed", async () => {
    await expect(
      resolveContent(`${server.url}/notes.txt`, { allowPrivateNetwork: false }),
    ).rejects.toBeInstanceOf(FetchRefusedError);
  });
});

describe("resolveContent for text", () => {
  it("keeps text as it is, without fetching anything", async () => {
    const resolved = await resolveContent("I like green tea.", { allowPrivateNetwork: false });
    expect(resolved).toEqual({
      text: "I like green tea.",
      type: "text",
      format: "plain",
      title: "I like green tea.",
      url: null,
    });
  });

  it("titles text by its first line (heading marks off, cut at a word) or a transcript by its speakers", () => {
    expect(textTitle("\n\n## Trip report\nWe went hiking.", "plain")).toBe("Trip report");
    const long = `${"word ".repeat(30)}end`;
    const title = textTitle(long, "plain")!;
    expect(title.length).toBeLessThanOrEqual(TEXT_TITLE_MAX);
    expect(title).toMatch(/^word( word)+…$/);
    expect(textTitle("Caroline: hi\nMelanie: hey\nCaroline: how are you?", "conversation")).toBe(
      "Conversation: Caroline, Melanie",
    );
    expect(textTitle("a: 1\nb: 2\nc: 3\nd: 4\na: 5", "conversation")).toBe(
      "Conversation: a, b, c and 1 more",
    );
    expect(textTitle("---\n***", "plain")).toBeNull();
  });

  it("titles an agent's transcript, whose speakers are only roles, by its day", async () => {
    const chat = "user: my sister moved to Porto\nassistant: noted";
    expect(textTitle(chat, "conversation", "2026-11-28")).toBe("Conversation of 28 November 2026");
    expect(textTitle(chat, "conversation", "2026-11-28T22:15:00.000Z")).toBe(
      "Conversation of 28 November 2026",
    );
    expect(textTitle(chat, "conversation")).toBe("Conversation");
    // A transcript whose turns say their day (as add_memory writes them) is titled by its first.
    expect(textTitle(`[2026-03-14] ${chat}`, "conversation", "2026-11-28")).toBe(
      "Conversation of 14 March 2026",
    );
    // The people in it name it, the roles do not.
    expect(textTitle("user: hi\nSofia: hey", "conversation", "2026-11-28")).toBe("Conversation: Sofia");
    // Processing passes the document's date, else when it was added.
    const resolved = await resolveContent(chat, { allowPrivateNetwork: false }, "2024-02-29");
    expect(resolved.title).toBe("Conversation of 29 February 2024");
  });

  it("treats a URL inside a sentence, or several lines, as text", async () => {
    for (const content of [`See ${server.url}/notes.txt for details`, `${server.url}/a\n${server.url}/b`]) {
      const resolved = await resolveContent(content, allow);
      expect(resolved.type).toBe("text");
      expect(resolved.text).toBe(content);
    }
    expect(server.requests.map((r) => r.path).filter((path) => path === "/a" || path === "/b")).toEqual([]);
  });

  it("marks a transcript as a conversation", async () => {
    const resolved = await resolveContent(
      "Caroline: I went hiking.\nMelanie: Where?\nCaroline: In the Alps.",
      allow,
    );
    expect(resolved.format).toBe("conversation");
  });
});
