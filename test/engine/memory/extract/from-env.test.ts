import { describe, expect, it } from "vitest";
import {
  extractorFromEnv,
  LlmExtractor,
  OfflineExtractor,
} from "../../../../src/engine/memory/extract/index.js";

describe("extractorFromEnv", () => {
  it("uses the offline extractor when no chat endpoint is configured", () => {
    expect(extractorFromEnv({})).toBeInstanceOf(OfflineExtractor);
  });

  it("uses the LLM extractor when MEMCTX_LLM_URL and MEMCTX_LLM_MODEL name a chat endpoint", () => {
    const e = extractorFromEnv({ MEMCTX_LLM_URL: "http://127.0.0.1:11434/v1", MEMCTX_LLM_MODEL: "qwen3:8b" });
    expect(e).toBeInstanceOf(LlmExtractor);
    expect(e.name).toBe("llm:qwen3:8b");
  });

  it("refuses a half-configured endpoint, naming the missing variable", () => {
    expect(() => extractorFromEnv({ MEMCTX_LLM_URL: "http://127.0.0.1:11434/v1" })).toThrow(
      /MEMCTX_LLM_MODEL/,
    );
  });
});
