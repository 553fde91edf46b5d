/**
 * One realistic agent session against `memctx mcp` (stdio, the MCP SDK's client), as a new user
 * meets it: 24 conversation turns of a persona (name, job, home, family, a colleague, habits,
 * three changes told as events or corrections, a sister's facts), one forget, a 5 KB project
 * README, then 14 questions and the profile. Prints what came back and tallies the checks (what
 * the answer's first memories and the profile must and must not say).
 *   npx tsx bench/agent-session.ts [--out FILE.md] [--quiet]
 * A figure for the note, not a test: it reads the offline extractor's work as a user would.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { memctxCommand, ROOT, startMemctxMcp } from "./suite/common.js";

const { values } = parseArgs({
  options: { out: { type: "string" }, quiet: { type: "boolean", default: false } },
});

/** The user's turns, day by day (the date each was said). */
const TURNS: [string, string][] = [
  ["2026-03-02", "Hi! I'm Ana Ribeiro, nice to meet you."],
  ["2026-03-02", "I work as a product designer at Lumen Labs in Porto."],
  ["2026-03-02", "My wife is Sofia. She's a marine biologist at the Oceanário."],
  ["2026-03-02", "We have a son, Tomás, who is six."],
  ["2026-03-03", "I drink a cortado every morning before work."],
  ["2026-03-03", "My favourite programming language is TypeScript, and I'm learning Go on weekends."],
  ["2026-03-03", "My colleague Rui Matos leads the mobile team; he prefers pair programming."],
  ["2026-03-04", "I'm allergic to peanuts."],
  ["2026-03-04", "We live in Foz, near the beach."],
  ["2026-03-04", "Sofia loves surfing, but I prefer running along the river."],
  ["2026-03-05", "By the way, I'm vegetarian."],
  ["2026-03-05", "Our team standup is on Mondays at 9:30."],
  ["2026-03-05", "I'm planning a trip to Kyoto in April with Sofia."],
  ["2026-03-06", "I drive a 2015 Renault Clio."],
  ["2026-03-09", "Actually, the standup moved to Tuesdays."],
  ["2026-03-10", "I sold the Clio last week and bought an electric bike."],
  ["2026-03-12", "I left Lumen Labs and joined Northwind as a design lead."],
  ["2026-03-12", "My sister Inês lives in Berlin and works as an architect."],
  ["2026-03-13", "I no longer drink coffee; I switched to green tea."],
  ["2026-03-13", "Tomás started school this September."],
  ["2026-03-16", "I'm reading The Overstory right now."],
  ["2026-03-16", "Rui is moving to the Lisbon office next month."],
  ["2026-03-17", "My manager at Northwind is Priya Raman."],
  ["2026-03-17", "I hate early morning meetings."],
];

interface Check {
  question: string;
  /** The search's mode: memories (default here), or hybrid for what a document's passages hold. */
  mode?: "memories" | "hybrid";
  /** The answer's first three memories hold each of these... */
  has: RegExp[];
  /** ...and none of these. */
  hasNot?: RegExp[];
}

const QUESTIONS: Check[] = [
  { question: "What is my name?", has: [/Ana Ribeiro/] },
  { question: "Where do I work?", has: [/Northwind/], hasNot: [/Lumen/] },
  { question: "What is my job?", has: [/design lead/], hasNot: [/product designer/] },
  { question: "Who is my wife and what does she do?", has: [/Sofia/, /marine biologist/] },
  { question: "Where do we live?", has: [/Foz/] },
  { question: "What do I drink in the morning?", has: [/green tea/], hasNot: [/cortado/] },
  { question: "When is the team standup?", has: [/Tuesday/], hasNot: [/Monday/] },
  { question: "What vehicle do I have?", has: [/electric bike/], hasNot: [/drives? a 2015 Renault Clio/] },
  { question: "Do I eat meat?", has: [/vegetarian/] },
  { question: "Where does my sister live?", has: [/Berlin/] },
  { question: "What does Rui prefer?", has: [/pair programming/] },
  { question: "Am I allergic to anything?", has: [], hasNot: [/peanut/i] },
  { question: "Who is my manager?", has: [/Priya Raman/] },
  { question: "When does the Atlas pipeline run?", has: [/02:00/], mode: "hybrid" },
];

/** What the profile must say, and must not. */
const PROFILE_HAS = [
  /Ana Ribeiro/,
  /Northwind/,
  /design lead/,
  /Sofia/,
  /Foz/,
  /vegetarian/,
  /green tea/,
  /electric bike/,
];
const PROFILE_HAS_NOT = [
  /Lumen Labs/,
  /cortado/,
  /drives? a 2015 Renault Clio/,
  /peanut/i,
  /Mondays/,
  /The user (?:lives in Berlin|works as an architect|prefers pair programming|is a marine biologist|loves surfing)/,
  /and others/,
  // A document the user keeps is one line (what it is), never its contents.
  /MR !|Dagster|COPY INTO|quarantine|Owner:|Runtime:/i,
];

const texts = (r: CallToolResult): string[] => {
  const s = r.structuredContent as { results?: { text: string }[] } | undefined;
  return (s?.results ?? []).map((x) => x.text);
};
const body = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

const lines: string[] = [];
const say = (s = "") => {
  lines.push(s);
  if (!values.quiet) console.log(s);
};

const cli = await memctxCommand(() => {});
const dir = mkdtempSync(join(tmpdir(), "memctx-agent-session-"));
const mcp = await startMemctxMcp(cli.args, dir, "ana");
let passed = 0;
let total = 0;
const check = (ok: boolean, what: string) => {
  total++;
  if (ok) passed++;
  else say(`  FAILED: ${what}`);
};
try {
  for (const [date, turn] of TURNS)
    await mcp.call("add_memory", { content: turn, conversationId: "ana-1", role: "user", date, wait: true });
  // The user takes something back.
  const dry = await mcp.call("forget", { query: "peanut allergy" });
  const ids = ((dry.structuredContent as { matches?: { id: string; memory: string }[] })?.matches ?? [])
    .filter((m) => /peanut/i.test(m.memory))
    .map((m) => m.id);
  if (ids.length > 0) await mcp.call("forget", { ids });
  await mcp.call("add_memory", {
    content: readFileSync(join(ROOT, "bench/agent-session/atlas-readme.md"), "utf8"),
    date: "2026-03-18",
    wait: true,
  });

  say("## Answers (first three memories)");
  for (const q of QUESTIONS) {
    const r = await mcp.call("search", { query: q.question, mode: q.mode ?? "memories", limit: 3 });
    const top = texts(r);
    say(`- ${q.question}`);
    for (const t of top) say(`    ${t}`);
    const joined = top.join("\n");
    for (const re of q.has) check(re.test(joined), `${q.question} has ${re}`);
    for (const re of q.hasNot ?? []) check(!re.test(joined), `${q.question} has not ${re}`);
  }
  const profile = body(await mcp.call("get_profile", {}));
  say("");
  say("## Profile");
  say(profile);
  for (const re of PROFILE_HAS) check(re.test(profile), `profile has ${re}`);
  for (const re of PROFILE_HAS_NOT) check(!re.test(profile), `profile has not ${re}`);
  say("");
  say(`## Checks: ${passed} of ${total}`);
} finally {
  await mcp.close();
  rmSync(dir, { recursive: true, force: true });
}
if (values.out) writeFileSync(values.out, `${lines.join("\n")}\n`);
