import type { Embedder } from "../models/embedder.js";
import { backgroundUnitShare } from "../text/background.js";
import { stemTexts } from "../text/terms.js";
import { expandTerms } from "./expand.js";
import { dateParser } from "./when.js";

/**
 * Reads what a search reads once per process (the word vectors, the stems' background ranks, the
 * WordNet table, the tokenizer, the date parser: about 0.2 s and 40 MiB), so that a session's
 * first search does not wait for them. One table per turn of the event loop: a request that
 * arrives meanwhile waits for one table at most, never for all of them.
 */
export async function preloadSearch(embedder: Embedder | null): Promise<void> {
  const steps = [
    () => embedder?.preload?.(),
    () => stemTexts(["memory"]),
    () => backgroundUnitShare("memory"),
    () => expandTerms([]),
    () => dateParser(),
  ];
  for (const step of steps) {
    await new Promise((resolve) => setImmediate(resolve));
    await step();
  }
}
