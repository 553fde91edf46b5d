/**
 * robots.txt (RFC 9309) as the web crawler reads it: the groups for our product token `memctx`,
 * or else the `*` groups; Allow and Disallow rules with `*` and a trailing `$`; the longest
 * matching rule decides, and Allow wins a tie. Crawl-delay and Sitemap lines are ignored.
 */

export const ROBOTS_USER_AGENT = "memctx";
/** RFC 9309 2.5: crawlers must parse at least 500 KiB; the rest is ignored. */
export const ROBOTS_MAX_BYTES = 500 * 1024;

interface Rule {
  allow: boolean;
  pattern: string;
  regex: RegExp;
}

export class RobotsRules {
  private constructor(private readonly rules: Rule[]) {}

  /** Everything allowed: no robots.txt (4xx), or no group for us. */
  static allowAll(): RobotsRules {
    return new RobotsRules([]);
  }

  static parse(text: string, userAgent = ROBOTS_USER_AGENT): RobotsRules {
    const ours = userAgent.toLowerCase();
    const groups: { agents: string[]; rules: Rule[] }[] = [];
    let current: { agents: string[]; rules: Rule[] } | null = null;
    let lastWasAgent = false;
    for (const rawLine of text.slice(0, ROBOTS_MAX_BYTES).split(/\r\n|\r|\n/)) {
      const line = rawLine.replace(/#.*$/, "").trim();
      const colon = line.indexOf(":");
      if (colon <= 0) continue;
      const key = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (key === "user-agent") {
        // Consecutive user-agent lines share one group.
        if (!lastWasAgent || current === null) {
          current = { agents: [], rules: [] };
          groups.push(current);
        }
        current.agents.push(value.toLowerCase());
        lastWasAgent = true;
        continue;
      }
      lastWasAgent = false;
      if (current === null || (key !== "allow" && key !== "disallow")) continue;
      // An empty Disallow allows everything; it adds no rule.
      if (value === "") continue;
      const pattern = normalizePattern(value);
      current.rules.push({ allow: key === "allow", pattern, regex: patternRegex(pattern) });
    }
    const matches = (agent: string) => agent !== "*" && (agent === ours || ours.startsWith(agent));
    const specific = groups.filter((g) => g.agents.some(matches));
    const chosen = specific.length > 0 ? specific : groups.filter((g) => g.agents.includes("*"));
    return new RobotsRules(chosen.flatMap((g) => g.rules));
  }

  /** Whether the URL's path and query may be crawled. */
  isAllowed(url: URL): boolean {
    const path = normalizePath(`${url.pathname}${url.search}`);
    if (path === "/robots.txt") return true;
    let best: Rule | null = null;
    for (const rule of this.rules) {
      if (!rule.regex.test(path)) continue;
      const longer = best === null || rule.pattern.length > best.pattern.length;
      const tieAllow =
        best !== null && rule.pattern.length === best.pattern.length && rule.allow && !best.allow;
      if (longer || tieAllow) best = rule;
    }
    return best === null || best.allow;
  }
}

function patternRegex(pattern: string): RegExp {
  const anchored = pattern.endsWith("$");
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const source = body
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}${anchored ? "$" : ""}`);
}

/** Percent-encodes what a URL would encode and upper-cases escapes, so rules and paths compare alike. */
function normalizePattern(value: string): string {
  const withSlash = value.startsWith("/") || value.startsWith("*") ? value : `/${value}`;
  return normalizePath(withSlash);
}

function normalizePath(path: string): string {
  return path
    .replace(/%[0-9a-fA-F]{2}/g, (hex) => hex.toUpperCase())
    .replace(/[^\x21-\x7e]/gu, (ch) => encodeURIComponent(ch));
}
