import { createRequire } from "node:module";
import type { HtmlToTextOptions } from "html-to-text";

/** html-to-text and its parser (some 30 modules) load with the first page, not at start. */
let converter: typeof import("html-to-text").convert | undefined;
function convert(html: string, options: HtmlToTextOptions): string {
  converter ??= (createRequire(import.meta.url)("html-to-text") as typeof import("html-to-text")).convert;
  return converter(html, options);
}

/** HTML to the readable text of the page: headings and paragraphs kept, navigation and code noise dropped. */
export interface HtmlText {
  title: string | null;
  text: string;
}

const skip = { format: "skip" } as const;
const heading = { options: { uppercase: false, leadingLineBreaks: 2, trailingLineBreaks: 1 } };

const OPTIONS: HtmlToTextOptions = {
  // One paragraph per line; chunking decides where text breaks, not a column width.
  wordwrap: false,
  selectors: [
    { selector: "script", ...skip },
    { selector: "style", ...skip },
    { selector: "noscript", ...skip },
    { selector: "template", ...skip },
    { selector: "svg", ...skip },
    { selector: "iframe", ...skip },
    { selector: "form", ...skip },
    { selector: "button", ...skip },
    { selector: "nav", ...skip },
    { selector: "footer", ...skip },
    { selector: "aside", ...skip },
    { selector: "[role=navigation]", ...skip },
    { selector: "[aria-hidden=true]", ...skip },
    // Only the page's own header is chrome; an article's <header> holds its title.
    { selector: "body > header", ...skip },
    { selector: "img", ...skip },
    { selector: "a", options: { ignoreHref: true } },
    { selector: "h1", ...heading },
    { selector: "h2", ...heading },
    { selector: "h3", ...heading },
    { selector: "h4", ...heading },
    { selector: "h5", ...heading },
    { selector: "h6", ...heading },
    { selector: "table", format: "dataTable", options: { uppercaseHeaderCells: false } },
  ],
};

export function htmlToText(html: string): HtmlText {
  const text = convert(html, OPTIONS)
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return { title: htmlTitle(html), text };
}

function htmlTitle(html: string): string | null {
  const raw =
    /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ??
    /<meta[^>]+property=["']og:title["'][^>]*content=["']([^"']*)["']/i.exec(html)?.[1] ??
    /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1];
  if (raw === undefined) return null;
  // Decodes entities and drops any markup inside the title.
  const title = convert(raw, { wordwrap: false }).replace(/\s+/g, " ").trim();
  return title === "" ? null : title;
}
