/**
 * The conversation transcript format: one turn per line, "Role: text", where the role is a short
 * name ("user", "assistant", "Caroline", "Dr. Smith"), optionally after a bracketed timestamp
 * ("[2023-05-07 10:00] Caroline: hi"). A turn may continue on the lines after it.
 */

/** One turn: the span from its role to the end of its last line (offsets into the text). */
export interface Turn {
  role: string;
  start: number;
  end: number;
  /** Where what was said begins: after the timestamp and "Role: " (the turn's start without a role). */
  bodyStart: number;
}

// A role is 1-4 words of letters/digits (with . ' - inside), at most 40 characters, then ": " and text.
const TURN_LINE =
  /^[ \t]*(?:\[[^\]\n]{1,40}\][ \t]*)?([\p{L}\p{N}][\p{L}\p{N}.'_-]*(?: [\p{L}\p{N}][\p{L}\p{N}.'_-]*){0,3})[ \t]*:[ \t]+\S/u;
const ROLE_MAX_LENGTH = 40;
/** Words that open "Key: value" lines of notes and headers far more often than they name a speaker. */
const NOT_ROLES = new Set([
  "http",
  "https",
  "note",
  "notes",
  "warning",
  "error",
  "todo",
  "tip",
  "step",
  "example",
]);

/** The role of a line that opens a turn, or null. */
export function turnRole(line: string): string | null {
  const match = TURN_LINE.exec(line);
  const role = match?.[1];
  if (role === undefined || role.length > ROLE_MAX_LENGTH) return null;
  if (NOT_ROLES.has(role.toLowerCase())) return null;
  return role;
}

/**
 * Roles that name a chat's parties and nothing else: one line opened by one of them is a turn (the
 * first turn an MCP client logs), where "Reminder: ..." or "Caroline: ..." alone may be a note.
 */
const CHAT_ROLES = new Set(["user", "human", "assistant", "ai"]);

/**
 * "conversation" when most non-empty lines open a turn, there are at least two turns (or one of a
 * chat role), and the roles recur the way speakers do (a header of distinct keys like "Title:",
 * "Author:", "Date:" does not).
 */
export function detectFormat(text: string): "plain" | "conversation" {
  let lines = 0;
  const roles: string[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    lines++;
    const role = turnRole(line);
    if (role !== null) roles.push(role.toLowerCase());
  }
  if (roles.length === 1 && lines === 1 && CHAT_ROLES.has(roles[0]!)) return "conversation";
  if (roles.length < 2 || roles.length * 2 <= lines) return "plain";
  const distinct = new Set(roles).size;
  return distinct <= Math.max(2, roles.length / 2) ? "conversation" : "plain";
}

/**
 * The turns of a transcript with exact offsets. Lines before the first turn form a turn with an
 * empty role; a line that opens no turn continues the one before it. Trailing whitespace is excluded.
 */
export function conversationTurns(text: string): Turn[] {
  const turns: Turn[] = [];
  let offset = 0;
  for (const line of text.split("\n")) {
    const lineStart = offset;
    offset += line.length + 1;
    if (line.trim() === "") continue;
    const role = turnRole(line);
    const last = turns.at(-1);
    const start = lineStart + (line.length - line.trimStart().length);
    const end = lineStart + line.trimEnd().length;
    if (role === null && last !== undefined) {
      last.end = end;
    } else {
      const body = role === null ? 0 : (TURN_LINE.exec(line)?.[0].length ?? 1) - 1;
      turns.push({ role: role ?? "", start, end, bodyStart: role === null ? start : lineStart + body });
    }
  }
  return turns;
}

/**
 * One turn as a transcript line, "role: text", what was said on one line (a line break inside it
 * would read as a new turn). The MCP add_memory tool writes its turns the same way.
 */
export const formatTurn = (role: string, text: string) =>
  `${role.trim()}: ${text.replace(/\s*[\r\n]+\s*/g, " ").trim()}`;
