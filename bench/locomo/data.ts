import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  /** What an image shared in the turn shows, as a captioning model wrote it ("a photo of a dog"). */
  blip_caption?: string;
}
export interface Question {
  question: string;
  answer: unknown;
  evidence: string[];
  category: number;
}
export interface Sample {
  sample_id: string;
  conversation: Record<string, unknown> & { speaker_a: string; speaker_b: string };
  qa: Question[];
}
export interface Session {
  key: string;
  /** As written in the data ("1:56 pm on 8 May, 2023"). */
  dateTime: string;
  /** ISO timestamp of dateTime, the document date. */
  date: string | null;
  turns: Turn[];
}

const here = dirname(fileURLToPath(import.meta.url));
export const DATA_PATH = resolve(here, "../../../shared/data/locomo/locomo-dev.json");

/** The dev split, or null when ../shared/data/locomo is absent. */
export function loadSamples(path = DATA_PATH): Sample[] | null {
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")) as Sample[];
}

const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];

/** "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00". */
export function parseSessionDate(s: string): string | null {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(s);
  if (!m) return null;
  let hour = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === "pm") hour += 12;
  const month = MONTHS.indexOf(m[5]!.toLowerCase()) + 1;
  if (month === 0) return null;
  const p = (n: number) => String(n).padStart(2, "0");
  return `${m[6]}-${p(month)}-${p(Number(m[4]))}T${p(hour)}:${m[2]}:00`;
}

export function sessions(sample: Sample): Session[] {
  const out: Session[] = [];
  const c = sample.conversation;
  for (let n = 1; `session_${n}` in c; n++) {
    const dateTime = String(c[`session_${n}_date_time`] ?? "");
    out.push({
      key: `session_${n}`,
      dateTime,
      date: parseSessionDate(dateTime),
      turns: c[`session_${n}`] as Turn[],
    });
  }
  return out;
}

/**
 * A session as a user of memctx would send it: one turn per line, "Speaker: text". With `captions`,
 * a turn that shared an image ends with "[shares a photo of ...]", the data's caption of it, as a
 * chat client that writes alt text would send it; without, the README's form.
 */
export function transcript(session: Session, opts: { captions?: boolean } = {}): string {
  return session.turns
    .map((t) => {
      const line = `${t.speaker}: ${t.text.replace(/\s*\n\s*/g, " ")}`;
      return opts.captions && t.blip_caption ? `${line} [shares ${t.blip_caption}]` : line;
    })
    .join("\n");
}
