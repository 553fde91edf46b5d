import type { Embedder } from "./embedder.js";
import { OpenAICompatibleEmbedder } from "./openai-compatible.js";
import { WordVectorEmbedder } from "./word-vectors.js";

/**
 * The embedder the environment asks for. Without MEMCTX_EMBEDDINGS_URL: the built-in word vectors
 * (word-vectors.ts, offline, no model), or none with MEMCTX_EMBEDDINGS=none.
 * MEMCTX_EMBEDDINGS_URL: base URL of an OpenAI-compatible server ("https://api.openai.com/v1",
 *   "http://localhost:11434/v1" for Ollama); "/embeddings" is appended.
 * MEMCTX_EMBEDDINGS_MODEL: required with the URL. MEMCTX_EMBEDDINGS_API_KEY: optional bearer key.
 * MEMCTX_EMBEDDINGS_DIMENSIONS: optional; sent as `dimensions` (models that can shorten vectors) and enforced.
 * A half-configured environment throws an error naming the missing variable rather than running without vectors.
 */
export function embedderFromEnv(env: NodeJS.ProcessEnv = process.env): Embedder | null {
  const url = env.MEMCTX_EMBEDDINGS_URL?.trim();
  const model = env.MEMCTX_EMBEDDINGS_MODEL?.trim();
  const apiKey = env.MEMCTX_EMBEDDINGS_API_KEY?.trim() || null;
  const dimensionsText = env.MEMCTX_EMBEDDINGS_DIMENSIONS?.trim();
  const builtIn = env.MEMCTX_EMBEDDINGS?.trim() || "word-vectors";
  if (builtIn !== "word-vectors" && builtIn !== "none") {
    throw new Error(`MEMCTX_EMBEDDINGS must be word-vectors or none, not ${builtIn}`);
  }
  if (!url) {
    if (model || apiKey || dimensionsText) {
      throw new Error(
        "MEMCTX_EMBEDDINGS_URL must be set to use an embeddings model (for example https://api.openai.com/v1 or http://localhost:11434/v1)",
      );
    }
    return builtIn === "none" ? null : new WordVectorEmbedder();
  }
  if (!model) throw new Error("MEMCTX_EMBEDDINGS_MODEL must be set when MEMCTX_EMBEDDINGS_URL is set");
  let dimensions: number | null = null;
  if (dimensionsText) {
    dimensions = Number(dimensionsText);
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65_536) {
      throw new Error(
        `MEMCTX_EMBEDDINGS_DIMENSIONS must be a whole number from 1 to 65536, not ${dimensionsText}`,
      );
    }
  }
  return new OpenAICompatibleEmbedder({ baseUrl: url, model, apiKey, dimensions });
}
