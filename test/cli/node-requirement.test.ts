/**
 * One Node requirement: the CLI's own check (src/cli/node-requirement.ts), package.json's engines,
 * the bundle manifest and the README say the same version, and that version satisfies the engines
 * of every package memctx installs for its users (a dependency that needs a newer Node would fail
 * there, on a Node that memctx's check let through).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_REQUIRED, nodeSupported } from "../../src/cli/node-requirement.js";

const ROOT = resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(resolve(ROOT, file), "utf8");
const MINIMUM = `${NODE_REQUIRED.join(".")}.0`;

type Version = [number, number, number];
const parse = (v: string): Version => {
  const [a = 0, b = 0, c = 0] = v.replace(/^v/, "").split(".").map(Number);
  return [a, b, c];
};
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** npm's range grammar as packages' engines use it: `||` of space-separated `>=`, `>`, `<`, `<=`, `^`, `~`, `=`, x. */
function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split("||").some((alternative) =>
    alternative
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1") // ">= 0.6" is one comparator
      .trim()
      .split(/\s+/)
      .filter((c) => c !== "" && c !== "*" && c !== "x")
      .every((comparator) => {
        const [, op = "", rest = ""] = /^(>=|<=|>|<|\^|~|=)?\s*(.*)$/.exec(comparator)!;
        const bound = parse(rest);
        const c = compare(v, bound);
        if (op === ">=") return c >= 0;
        if (op === ">") return c > 0;
        if (op === "<") return c < 0;
        if (op === "<=") return c <= 0;
        if (op === "^") return c >= 0 && v[0] === bound[0];
        if (op === "~") return c >= 0 && v[0] === bound[0] && v[1] === bound[1];
        const parts = rest.split(".").length; // "22" or "22.19": a partial version matches its prefix
        return v.slice(0, parts).every((n, i) => n === bound[i]);
      }),
  );
}

describe("the Node that memctx requires", () => {
  it("reads ranges as npm does (the check below can fail)", () => {
    expect(satisfies("22.19.0", ">=22.19.0")).toBe(true);
    expect(satisfies("22.13.0", ">=22.19.0")).toBe(false);
    expect(satisfies("22.19.0", "^20.19.0 || ^22.13.0 || >=23.5.0")).toBe(true);
    expect(satisfies("21.0.0", "^20.19.0 || ^22.13.0 || >=23.5.0")).toBe(false);
    expect(satisfies("22.19.0", ">= 14.0.0 < 23")).toBe(true);
    expect(nodeSupported("22.18.9")).toBe(false);
    expect(nodeSupported(MINIMUM)).toBe(true);
    expect(nodeSupported("24.0.0")).toBe(true);
  });

  it("is the same in package.json, manifest.json and the README", () => {
    expect(JSON.parse(read("package.json")).engines.node).toBe(`>=${NODE_REQUIRED.join(".")}`);
    expect(JSON.parse(read("manifest.json")).compatibility.runtimes.node).toBe(`>=${MINIMUM}`);
    const readme = read("README.md");
    const named = [...readme.matchAll(/Node (?:older than )?(\d+\.\d+)|Node \((\d+\.\d+) or/g)].map(
      (m) => m[1] ?? m[2],
    );
    expect(named.length).toBeGreaterThan(0);
    for (const v of named) expect(v).toBe(NODE_REQUIRED.join("."));
  });

  it("satisfies the engines of every package installed for users (not only for development)", () => {
    const lock = JSON.parse(read("package-lock.json")) as {
      packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[] }>;
    };
    const unmet = Object.entries(lock.packages)
      .filter(([path, p]) => path !== "" && !p.dev && !Array.isArray(p.engines) && p.engines?.node)
      .map(([path, p]) => ({ path, range: (p.engines as { node: string }).node }))
      .filter(({ range }) => !satisfies(MINIMUM, range));
    expect(unmet).toEqual([]);
  });
});
