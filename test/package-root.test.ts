import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { findRoot, packageUrl } from "../src/package-root.js";

describe("the package's files, found from any module's depth", () => {
  const dir = mkdtempSync(join(tmpdir(), "memctx-root-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("finds the folder with package.json above src/, dist/ and the bundle's chunks alike", () => {
    writeFileSync(join(dir, "package.json"), "{}");
    for (const depth of ["src/engine/search", "dist/engine/search", "dist/cli/chunks", "dist"]) {
      mkdirSync(join(dir, depth), { recursive: true });
      expect(findRoot(pathToFileURL(join(dir, depth, "/"))).href).toBe(pathToFileURL(join(dir, "/")).href);
    }
  });

  it("says where it looked when no package.json is above", () => {
    expect(() => findRoot(new URL("file:///"))).toThrow(/no package.json above file:\/\/\//);
  });

  it("names memctx's own assets and build files from the sources", () => {
    expect(existsSync(packageUrl("assets/word-vectors.bin"))).toBe(true);
    expect(existsSync(packageUrl("assets/wordnet-expansions.tsv"))).toBe(true);
    expect(existsSync(packageUrl("src/engine/processing-thread.ts"))).toBe(true);
  });
});
