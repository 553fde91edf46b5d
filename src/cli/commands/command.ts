export interface Command {
  name: string;
  /** One line for `memctx --help`. */
  summary: string;
  /** The full text of `memctx <name> --help`. */
  usage: string;
  run(argv: string[]): Promise<number>;
}
