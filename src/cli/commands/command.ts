import type { FlagOptions } from "../args.js";

export interface Command {
  name: string;
  /** Its flags: `usage` lists every one, and a mistyped one is answered with the nearest. */
  options: FlagOptions;
  /** One line for `memctx --help`. */
  summary: string;
  /** The full text of `memctx <name> --help`. */
  usage: string;
  run(argv: string[]): Promise<number>;
}
