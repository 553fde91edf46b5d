import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { openApiDocument } from "../../api/openapi.js";
import type { Command } from "./command.js";

export const openapi: Command = {
  name: "openapi",
  summary: "Print the OpenAPI 3.1 document of the v5 API",
  usage: `
Usage: memctx openapi [--out FILE]

Prints the OpenAPI 3.1 document of the Memory and Context Service API v5, generated from
the same schemas the client and the engine use.

Options:
  --out FILE   write to FILE instead of standard output
  -h, --help   show this help`,
  async run(argv) {
    const { values } = parseArgs({ args: argv, options: { out: { type: "string" } } });
    const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
    if (values.out) writeFileSync(values.out, text);
    else process.stdout.write(text);
    return 0;
  },
};
