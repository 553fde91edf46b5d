import { existsSync } from "node:fs";

/**
 * A file of the memctx package, by its path from the package's root ("assets/word-vectors.bin",
 * "dist/engine/processing-thread.js"). The root is the nearest folder above this module that holds a
 * package.json: modules sit at different depths in src/ (tsx), dist/ (tsc) and the bundled command
 * (dist/cli/chunks/), so a path relative to a module's own place holds for one layout only.
 */
export function packageUrl(path: string): URL {
  root ??= findRoot(new URL("./", import.meta.url));
  return new URL(path, root);
}

let root: URL | undefined;

/** The first folder from `start` upwards with a package.json (src/ and dist/ have none of their own). */
export function findRoot(start: URL): URL {
  for (let dir = start; ; dir = new URL("../", dir)) {
    if (existsSync(new URL("package.json", dir))) return dir;
    if (new URL("../", dir).href === dir.href)
      throw new Error(`no package.json above ${start.href}: memctx's files are not where it was installed`);
  }
}

/** Whether memctx runs from its TypeScript sources (tests, tsx) rather than from its build. */
export const FROM_SOURCE = import.meta.url.endsWith(".ts");
