/**
 * Editing an MCP client's configuration file in place. VS Code writes its mcp.json as JSON with
 * comments and trailing commas, and people comment the others too: the file is edited, not
 * rewritten, with Microsoft's jsonc-parser (VS Code's own): only our entry (and VS Code's key
 * input) changes, every comment and the rest of the formatting stay as they were.
 */
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import {
  applyEdits,
  type FormattingOptions,
  type JSONPath,
  modify,
  type ParseError,
  parse,
  printParseErrorCode,
} from "jsonc-parser";
import { CliError } from "../cli-error.js";

/** What one install changes in a file: one server entry, and inputs (by id) it refers to. */
export interface EntryChange {
  serversKey: string;
  name: string;
  entry: Record<string, unknown>;
  inputs?: readonly { id: string; [k: string]: unknown }[];
}

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false } as const;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The text of `file` with the change made; comments, order and formatting elsewhere kept. */
export function withEntry(text: string, file: string, change: EntryChange): string {
  const source = text.trim() ? text : "{}\n";
  const root = parseConfig(source, file);
  const servers = root[change.serversKey];
  if (servers !== undefined && !isObject(servers)) {
    throw new CliError(
      `"${change.serversKey}" in ${file} is not an object; nothing was changed. Fix it by hand first`,
    );
  }
  const inputs = root.inputs;
  if (change.inputs?.length && inputs !== undefined && !Array.isArray(inputs)) {
    throw new CliError(`"inputs" in ${file} is not a list; nothing was changed. Fix it by hand first`);
  }
  const formattingOptions = formattingOf(source);
  // New properties and list items go first: jsonc-parser formats the whole lines an edit touches,
  // and inserted first, the edit starts on the line of the opening brace, which holds nothing else
  // of the user's; appended, it would reflow the last entry's line (a one-line entry, say).
  const edit = (out: string, path: JSONPath, value: unknown, isArrayInsertion = false) =>
    applyEdits(
      out,
      modify(out, path, value, { formattingOptions, getInsertionIndex: () => 0, isArrayInsertion }),
    );

  let out = edit(source, [change.serversKey, change.name], change.entry);
  let listed = Array.isArray(inputs) ? [...(inputs as unknown[])] : undefined;
  for (const input of change.inputs ?? []) {
    if (listed === undefined) {
      out = edit(out, ["inputs"], [input]);
      listed = [input];
      continue;
    }
    // An input of the same id is replaced where it stands; a new one goes first.
    const at = listed.findIndex((i) => isObject(i) && i.id === input.id);
    out = at >= 0 ? edit(out, ["inputs", at], input) : edit(out, ["inputs", 0], input, true);
    if (at < 0) listed.unshift(input);
  }
  const eol = formattingOptions.eol ?? "\n";
  return out.endsWith(eol) || !source.endsWith("\n") ? out : out + eol;
}

/** The file's root object; a file that is not JSON (with comments) is named with where it breaks. */
export function parseConfig(text: string, file: string): Json {
  const errors: ParseError[] = [];
  const root = parse(text, errors, PARSE_OPTIONS) as unknown;
  const first = errors[0];
  if (first) {
    const { line, column } = lineAndColumn(text, first.offset);
    throw new CliError(
      `${file} is not valid JSON (${printParseErrorCode(first.error)} at line ${line}, column ${column}); nothing was changed. Fix the file, or add the entry by hand: run the same command with --print`,
    );
  }
  if (text.trim() && !isObject(root)) {
    throw new CliError(`${file} does not hold a JSON object; nothing was changed`);
  }
  return isObject(root) ? root : {};
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

/** The file's own indentation and line ends, so that the new entry looks like what is around it. */
function formattingOf(text: string): FormattingOptions {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const indents = [...text.matchAll(/^([ \t]+)\S/gm)].map((m) => m[1]!);
  if (indents.some((i) => i.startsWith("\t"))) return { insertSpaces: false, tabSize: 1, eol };
  const tabSize = indents.length ? Math.min(...indents.map((i) => i.length)) : 2;
  return { insertSpaces: true, tabSize, eol };
}

export interface WriteResult {
  file: string;
  /** A copy of what was there, or undefined when the file is new. */
  backup: string | undefined;
  text: string;
}

/** Copies `file` aside as `<file>.memctx-backup-<time>`; undefined when there is no file. */
export function backUp(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const backup = `${file}.memctx-backup-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  copyFileSync(file, backup);
  return backup;
}

/**
 * Makes the change in `file`, keeping a backup of what was there; nothing is written when the file
 * cannot be read. `secret`: the entry holds a key, so the file becomes readable by its owner only.
 */
export function writeEntry(file: string, change: EntryChange, secret = false): WriteResult {
  const before = existsSync(file) ? readFileSync(file, "utf8") : "";
  const text = withEntry(before, file, change);
  const backup = backUp(file);
  mkdirSync(dirname(file), { recursive: true });
  // Write beside and rename: a crash never leaves a half-written configuration. A new file is
  // readable by its owner only; an existing one keeps its mode unless a key goes in.
  const mode = secret || !existsSync(file) ? 0o600 : statSync(file).mode & 0o777;
  const tmp = `${file}.memctx-tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
  return { file, backup, text };
}
