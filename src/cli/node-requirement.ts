/**
 * The oldest Node that memctx runs on: node:sqlite unflagged (22.13) and undici 8, the client's
 * HTTP stack (22.19). package.json's engines, manifest.json and the README say the same; a test
 * holds them, and every runtime dependency's own engines, to it. No imports: main.ts reads it
 * before it knows that this Node can load anything else.
 */
export const NODE_REQUIRED = [22, 19] as const;

/** Whether `version` ("22.19.0", process.versions.node) is at least NODE_REQUIRED. */
export function nodeSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > NODE_REQUIRED[0] || (major === NODE_REQUIRED[0] && minor >= NODE_REQUIRED[1]);
}
