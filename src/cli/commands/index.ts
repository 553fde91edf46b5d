import type { Command } from "./command.js";
import { exportCommand } from "./export.js";
import { importCommand } from "./import.js";
import { install } from "./install.js";
import { keys } from "./keys.js";
import { mcp } from "./mcp.js";
import { migrateCommand } from "./migrate.js";
import { openapi } from "./openapi.js";
import { serve } from "./serve.js";
import { status } from "./status.js";
import { ui } from "./ui.js";

/** Every subcommand, in the order `memctx --help` lists them. */
export const commands: Command[] = [
  mcp,
  serve,
  ui,
  status,
  install,
  exportCommand,
  importCommand,
  migrateCommand,
  keys,
  openapi,
];

export const findCommand = (name: string) => commands.find((c) => c.name === name);
