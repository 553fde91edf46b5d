import { chatModelFromEnv } from "../../models/chat.js";
import { LlmExtractor } from "./llm.js";
import { OfflineExtractor } from "./offline.js";
import type { Extractor } from "./types.js";

export { LlmExtractor } from "./llm.js";
export { extractFacts, OfflineExtractor } from "./offline.js";
export type { ExtractedFact, ExtractionInput, Extractor } from "./types.js";

/** The LLM extractor when MEMCTX_LLM_URL and _MODEL name a chat endpoint, else the offline default. */
export function extractorFromEnv(env: NodeJS.ProcessEnv = process.env): Extractor {
  const chat = chatModelFromEnv(env);
  return chat ? new LlmExtractor(chat) : new OfflineExtractor();
}
