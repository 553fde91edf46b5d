import { describe, expect, it } from "vitest";
import { extractLinks, metaRobots, normalizeUrl } from "../../../src/engine/connectors/links.js";
import { RobotsRules } from "../../../src/engine/connectors/robots.js";

const allowed = (rules: RobotsRules, path: string) => rules.isAllowed(new URL(path, "https://site.example"));

describe("robots.txt rules", () => {
  it("lets the longest matching rule decide, and Allow win a tie", () => {
    const rules = RobotsRules.parse(
      "User-agent: *\nDisallow: /docs/\nAllow: /docs/public/\nDisallow: /docs/public/drafts\nAllow: /tie\nDisallow: /tie\n",
    );
    expect(allowed(rules, "/docs/secret")).toBe(false);
    expect(allowed(rules, "/docs/public/page")).toBe(true);
    expect(allowed(rules, "/docs/public/drafts/x")).toBe(false);
    expect(allowed(rules, "/tie")).toBe(true);
    expect(allowed(rules, "/other")).toBe(true);
  });

  it("understands * wildcards and the $ end anchor, including in the query", () => {
    const rules = RobotsRules.parse(
      "User-agent: *\nDisallow: /*.pdf$\nDisallow: /*?session=\nDisallow: /tmp*/cache\n",
    );
    expect(allowed(rules, "/files/report.pdf")).toBe(false);
    expect(allowed(rules, "/files/report.pdf?download=1")).toBe(true);
    expect(allowed(rules, "/search?session=42")).toBe(false);
    expect(allowed(rules, "/tmp123/cache/x")).toBe(false);
    expect(allowed(rules, "/tmp123/other")).toBe(true);
  });

  it("uses the memctx group when there is one, ignoring the * group", () => {
    const text =
      "User-agent: *\nDisallow: /\n\nUser-agent: Googlebot\nUser-agent: memctx\nDisallow: /private\n";
    const rules = RobotsRules.parse(text);
    expect(allowed(rules, "/public")).toBe(true);
    expect(allowed(rules, "/private/x")).toBe(false);
    expect(allowed(RobotsRules.parse(text, "otherbot"), "/public")).toBe(false);
  });

  it("treats an empty Disallow as allowing everything and always allows /robots.txt", () => {
    expect(allowed(RobotsRules.parse("User-agent: *\nDisallow:\n"), "/anything")).toBe(true);
    expect(allowed(RobotsRules.parse("User-agent: *\nDisallow: /\n"), "/robots.txt")).toBe(true);
    expect(allowed(RobotsRules.parse("User-agent: *\nDisallow: /\n"), "/index.html")).toBe(false);
  });

  it("ignores comments, unknown lines and rules outside any group", () => {
    const rules = RobotsRules.parse(
      "Disallow: /early\n# comment\nSitemap: https://x/s.xml\nUser-agent: * # all\nCrawl-delay: 10\nDisallow: /late # why\n",
    );
    expect(allowed(rules, "/early")).toBe(true);
    expect(allowed(rules, "/late")).toBe(false);
  });
});

describe("page links", () => {
  it("resolves, normalizes and deduplicates links, and drops what is not a page", () => {
    const html = `<base href="/docs/">
      <a href="intro.html#part">x</a><a href='intro.html'>dup</a><a href=../top>top</a>
      <a href="mailto:a@b.c">m</a><a href="javascript:alert(1)">j</a><a href="tel:123">t</a><a href="#only">f</a>
      <!-- <a href="/commented">c</a> --><script>var s = '<a href="/in-script">';</script>
      <area href="/map?a=1&amp;b=2"><a href="https://other.example/x">o</a>`;
    expect(extractLinks(html, "https://site.example/start").map((u) => u.href)).toEqual([
      "https://site.example/docs/intro.html",
      "https://site.example/top",
      "https://site.example/map?a=1&b=2",
      "https://other.example/x",
    ]);
    expect(normalizeUrl("HTTP://Site.Example:80/a#b", "https://x/")?.href).toBe("http://site.example/a");
  });

  it("reads meta robots noindex and nofollow", () => {
    expect(metaRobots('<meta name="robots" content="noindex, nofollow">')).toEqual({
      noindex: true,
      nofollow: true,
    });
    expect(metaRobots('<meta name="description" content="noindex">')).toEqual({
      noindex: false,
      nofollow: false,
    });
  });
});
