import { readFileSync } from "node:fs";
import { packageUrl } from "./package-root.js";

/** The package version, read from package.json so there is one place to change it. */
export const VERSION: string = (
  JSON.parse(readFileSync(packageUrl("package.json"), "utf8")) as { version: string }
).version;
