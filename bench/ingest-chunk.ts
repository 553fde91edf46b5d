/**
 * chunkText speed on a 2 kB and a 200 kB text (plain prose and a conversation transcript).
 * Run: npx tsx bench/ingest-chunk.ts
 */
import { chunkText } from "../src/engine/ingest/chunk.js";
import { detectFormat } from "../src/engine/text/conversation.js";

const SENTENCES = [
  "Caroline moved to Berlin in May 2023, after years in Hamburg.",
  "Dr. Smith, her counselor, recommended a support group that meets on Tuesdays.",
  "She has been going every week since then and says it helps a lot!",
  "Is it the people, or the routine?",
  "Melanie thinks it is both, e.g. she sleeps better and laughs more often.",
  "They plan a trip to the Alps next summer with their two kids and the dog.",
];

function prose(chars: number): string {
  const paragraphs: string[] = [];
  let length = 0;
  for (let p = 0; length < chars; p++) {
    const count = 2 + (p % 5);
    const sentences = Array.from({ length: count }, (_, s) => SENTENCES[(p * 3 + s) % SENTENCES.length]!);
    const paragraph = sentences.join(" ");
    paragraphs.push(paragraph);
    length += paragraph.length + 2;
  }
  return paragraphs.join("\n\n").slice(0, chars);
}

function transcript(chars: number): string {
  const lines: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const line = `${i % 2 ? "Melanie" : "Caroline"}: ${SENTENCES[i % SENTENCES.length]} ${SENTENCES[(i + 2) % SENTENCES.length]}`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n").slice(0, chars);
}

function measure(label: string, text: string, format: "plain" | "conversation"): void {
  const iterations = Math.max(5, Math.round(2_000_000 / text.length));
  for (let i = 0; i < 3; i++) chunkText(text, { format });
  const started = performance.now();
  let chunks = 0;
  for (let i = 0; i < iterations; i++) chunks = chunkText(text, { format }).length;
  const ms = (performance.now() - started) / iterations;
  const detectStarted = performance.now();
  for (let i = 0; i < iterations; i++) detectFormat(text);
  const detectMs = (performance.now() - detectStarted) / iterations;
  console.log(
    `${label.padEnd(26)} ${String(text.length).padStart(7)} chars  ${String(chunks).padStart(4)} chunks  ` +
      `chunkText ${ms.toFixed(3)} ms  detectFormat ${detectMs.toFixed(3)} ms  (${iterations} runs)`,
  );
}

console.log(`node ${process.version}`);
measure("prose 2 kB", prose(2_000), "plain");
measure("prose 200 kB", prose(200_000), "plain");
measure("one 200 kB paragraph", prose(200_000).replaceAll("\n\n", " "), "plain");
measure("conversation 2 kB", transcript(2_000), "conversation");
measure("conversation 200 kB", transcript(200_000), "conversation");
