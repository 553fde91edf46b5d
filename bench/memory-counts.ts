/**
 * Memories the offline extractor draws per document: each LoCoMo session as one conversation
 * document (the bench corpus), and one long reference document (test/fixtures/harbor-queue-manual.md,
 * a 19 KB operator manual with contents, running footers and a bibliography).
 *   npx tsx bench/memory-counts.ts [--show]   (--show lists the manual's memories)
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { extractFacts } from "../src/engine/memory/extract/offline.js";
import { loadSamples, sessions, transcript } from "./locomo/data.js";

const { values } = parseArgs({ options: { show: { type: "boolean", default: false } } });
const data = loadSamples();
if (data === null) {
  console.log("LoCoMo data not found (see ../shared/data/locomo/README.md)");
} else {
  const counts: number[] = [];
  for (const sample of data)
    for (const s of sessions(sample))
      counts.push(extractFacts({ text: transcript(s), format: "conversation", documentDate: s.date }).length);
  counts.sort((a, b) => a - b);
  const sum = counts.reduce((a, b) => a + b, 0);
  console.log(
    `LoCoMo: ${counts.length} documents, ${sum} memories; per document mean ${(sum / counts.length).toFixed(1)}, median ${counts[counts.length >> 1]}, max ${counts.at(-1)}`,
  );
}
const manual = readFileSync(new URL("../test/fixtures/harbor-queue-manual.md", import.meta.url), "utf8");
const facts = extractFacts({ text: manual, format: "plain", documentDate: "2026-03-15" });
console.log(`manual: ${manual.length} characters -> ${facts.length} memories`);
if (values.show) for (const f of facts) console.log(`  ${f.memory}`);
