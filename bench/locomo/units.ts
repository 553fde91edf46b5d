import type { ExtractedFact } from "../../src/engine/memory/extract/index.js";
import { formatDay, parseDocumentDate } from "../../src/engine/text/dates.js";
import { type Sample, type Session, type Turn, transcript } from "./data.js";
import type { Unit } from "./retrieval.js";

/** "8 May 2023" for a session: the date label every chunk carries. */
export function dayLabel(session: Session): string {
  const d = parseDocumentDate(session.date);
  return d ? formatDay(d.year, d.month, d.day) : session.dateTime;
}

const line = (t: Turn) => `${t.speaker}: ${t.text.replace(/\s*\n\s*/g, " ")}`;

/**
 * Chunks as the engine keeps conversation turns: whole turns, `window` per chunk, each prefixed with
 * the document date; the neighbouring turns (`neighbours` each side) are indexed as context.
 */
export function chunkUnits(sample: Sample, session: Session, window = 1, neighbours = 1): Unit[] {
  const label = dayLabel(session);
  const units: Unit[] = [];
  for (let i = 0; i < session.turns.length; i += window) {
    const turns = session.turns.slice(i, i + window);
    const around = [
      ...session.turns.slice(Math.max(0, i - neighbours), i),
      ...session.turns.slice(i + window, i + window + neighbours),
    ];
    units.push({
      kind: "chunk",
      text: `[${label}] ${turns.map(line).join("\n")}`,
      context: around.map(line).join("\n"),
      speaker: turns[0]!.speaker.toLowerCase(),
      turns: turns.map((t) => `${sample.sample_id}/${t.dia_id}`),
    });
  }
  return units;
}

/**
 * Memories of a session; each indexes as context the document date, its source turn and
 * `neighbours` turns each side.
 */
export function memoryUnits(
  sample: Sample,
  session: Session,
  facts: ExtractedFact[],
  neighbours = 1,
): Unit[] {
  const text = transcript(session);
  const lineStarts: number[] = [];
  let at = 0;
  for (const l of text.split("\n")) {
    lineStarts.push(at);
    at += l.length + 1;
  }
  return facts.map((f) => {
    let n = 0;
    while (f.source && n + 1 < lineStarts.length && lineStarts[n + 1]! <= f.source.start) n++;
    const turn = session.turns[n];
    return {
      kind: "memory",
      text: f.memory,
      context:
        `[${dayLabel(session)}]\n` +
        session.turns
          .slice(Math.max(0, n - neighbours), n + neighbours + 1)
          .map(line)
          .join("\n"),
      speaker: turn ? turn.speaker.toLowerCase() : null,
      turns: turn ? [`${sample.sample_id}/${turn.dia_id}`] : [],
    };
  });
}
