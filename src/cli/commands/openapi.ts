import { writeFileSync } from "node:fs";
import { openApiDocument } from "../../api/openapi.js";
import { type FlagOptions, parseFlags } from "../args.js";
import type { Command } from "./command.js";

/** The flags of `memctx openapi`, each one listed in its usage (a test holds them to it). */
const options = { out: { type: "string" } } as const satisfies FlagOptions;

export const openapi: Command = {
  name: "openapi",
  options,
  summary: "Print the OpenAPI 3.1 document of the v5 API",
  usage: `
Usage: memctx openapi [--out FILE]

Prints the OpenAPI 3.1 document of the Memory and Context Service API v5, generated from
the same schemas the client and the engine use.

Options:
  --out FILE   write to FILE instead of standard output
  -h, --help   show this help`,
  async run(argv) {
    const { values } = parseFlags("openapi", { args: argv, options });
    const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
    if (values.out) writeFileSync(values.out, text);
    else process.stdout.write(text);
    return 0;
  },
};
