import type { Command } from "./command.js";
import { openapi } from "./openapi.js";

/** Every subcommand, in the order `memctx --help` lists them. */
export const commands: Command[] = [openapi];

export const findCommand = (name: string) => commands.find((c) => c.name === name);
