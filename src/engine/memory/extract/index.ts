export { LlmExtractor } from "./llm.js";
export { extractFacts, OfflineExtractor } from "./offline.js";
export type { ExtractedFact, ExtractionInput, Extractor } from "./types.js";
