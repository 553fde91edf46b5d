import type { Embedder } from "../models/embedder.js";
import { backgroundUnitShare } from "../text/background.js";
import { stemTexts } from "../text/terms.js";
import { expandTerms } from "./expand.js";
import { dateParser } from "./when.js";

/**
 * Reads what every search reads once per process (the word vectors, the stems' background ranks,
 * the WordNet table, the tokenizer, Node's Request and Response), so that a session's first search does not wait for them. One
 * table per turn of the event loop: a request that arrives meanwhile waits for one table at most,
 * never for all of them. The date parser, which only a question that names a date needs, loads
 * DATE_PARSER_DELAY_MS later, while the session is likely idle (an agent's model reads and thinks
 * between calls); loaded at once, it held up a first search that names no date.
 */
export async function preloadSearch(embedder: Embedder | null): Promise<void> {
  const steps = [
    () => embedder?.preload?.(),
    () => stemTexts(["memory"]),
    () => backgroundUnitShare("memory"),
    () => expandTerms([]),
    // Node loads its fetch classes (undici) on first use: a search's request and answer are ones.
    () => new Response(null).status,
  ];
  for (const step of steps) {
    await new Promise((resolve) => setImmediate(resolve));
    await step();
  }
  // Not awaited, and no reason to keep the process alive; a question that names a date loads it itself.
  setTimeout(() => void dateParser().catch(() => {}), DATE_PARSER_DELAY_MS).unref();
}

/** How long after the other tables the date parser loads. */
export const DATE_PARSER_DELAY_MS = 1_000;
