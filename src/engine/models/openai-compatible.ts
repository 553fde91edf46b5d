import type { Embedder } from "./embedder.js";
import { endpointUrl, httpError, ModelRequestError, postJson } from "./openai-http.js";

/**
 * Embeddings over the OpenAI `/embeddings` wire format, which OpenAI, Ollama (/v1), vLLM and
 * LM Studio all speak: POST {model, input: string[]} -> {data: [{index, embedding}], model, usage}.
 */
export interface OpenAICompatibleEmbedderOptions {
  /** Base URL; see endpointUrl for the rule ("/embeddings" is appended). */
  baseUrl: string;
  model: string;
  apiKey?: string | null;
  /** Requested (sent as `dimensions`) and enforced when set. */
  dimensions?: number | null;
  /** Texts per request. */
  batchSize?: number;
  timeoutMs?: number;
  retries?: number;
  retryBaseMs?: number;
}

export const EMBEDDINGS_BATCH_SIZE_DEFAULT = 64;

/** Vector sizes of models whose size is fixed and published; others are learned from the first answer. */
const KNOWN_DIMENSIONS: Record<string, number> = {
  "text-embedding-3-small": 1536,
  "text-embedding-3-large": 3072,
  "text-embedding-ada-002": 1536,
};

export class OpenAICompatibleEmbedder implements Embedder {
  readonly model: string;
  readonly url: string;
  #dimensions: number;
  readonly #requestedDimensions: number | null;
  readonly #apiKey: string | null;
  readonly #batchSize: number;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #retryBaseMs: number;

  constructor(opts: OpenAICompatibleEmbedderOptions) {
    this.model = opts.model;
    this.url = endpointUrl(opts.baseUrl, "/embeddings");
    this.#requestedDimensions = opts.dimensions ?? null;
    this.#dimensions = opts.dimensions ?? KNOWN_DIMENSIONS[opts.model] ?? 0;
    this.#apiKey = opts.apiKey ?? null;
    this.#batchSize = Math.max(1, opts.batchSize ?? EMBEDDINGS_BATCH_SIZE_DEFAULT);
    this.#timeoutMs = opts.timeoutMs ?? 60_000;
    this.#retries = opts.retries ?? 2;
    this.#retryBaseMs = opts.retryBaseMs ?? 500;
  }

  get dimensions(): number {
    return this.#dimensions;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    // One batch at a time: local servers (Ollama, LM Studio) queue parallel requests anyway.
    for (let i = 0; i < texts.length; i += this.#batchSize) {
      out.push(...(await this.#embedBatch(texts.slice(i, i + this.#batchSize), signal)));
    }
    return out;
  }

  async #embedBatch(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const what = `embeddings request to ${this.url} (model ${this.model})`;
    const payload: Record<string, unknown> = { model: this.model, input };
    if (this.#requestedDimensions !== null) payload.dimensions = this.#requestedDimensions;
    const { status, body } = await postJson(this.url, payload, {
      apiKey: this.#apiKey,
      timeoutMs: this.#timeoutMs,
      retries: this.#retries,
      retryBaseMs: this.#retryBaseMs,
      what,
      ...(signal ? { signal } : {}),
    });
    if (status >= 400) throw httpError(what, status, body);

    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new ModelRequestError(
        `${what} answered ${Array.isArray(data) ? data.length : "no"} embeddings for ${input.length} inputs`,
      );
    }
    const vectors: (Float32Array | undefined)[] = new Array(input.length);
    data.forEach((item: { index?: unknown; embedding?: unknown }, position) => {
      // Servers may answer out of order; `index` says which input each vector belongs to.
      const index = typeof item?.index === "number" ? item.index : position;
      if (!Number.isInteger(index) || index < 0 || index >= input.length || vectors[index] !== undefined) {
        throw new ModelRequestError(`${what} answered an embedding with a bad or repeated index ${index}`);
      }
      vectors[index] = this.#checked(toVector(item?.embedding, what), what);
    });
    return vectors as Float32Array[];
  }

  #checked(vector: Float32Array, what: string): Float32Array {
    if (this.#dimensions === 0) this.#dimensions = vector.length;
    if (vector.length !== this.#dimensions) {
      throw new ModelRequestError(
        `${what} answered a vector of ${vector.length} dimensions; ${this.#dimensions} were expected`,
      );
    }
    return normalize(vector);
  }
}

/** A float array, or the base64 of little-endian float32s (encoding_format "base64"). */
function toVector(embedding: unknown, what: string): Float32Array {
  if (Array.isArray(embedding) && embedding.length > 0 && embedding.every((x) => typeof x === "number")) {
    return Float32Array.from(embedding as number[]);
  }
  if (typeof embedding === "string" && embedding.length > 0) {
    const bytes = Buffer.from(embedding, "base64");
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }
  throw new ModelRequestError(`${what} answered an embedding that is not a list of numbers`);
}

/** Scales to unit length, so cosine similarity is a dot product; a zero vector stays zero. */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm === 0 || !Number.isFinite(norm)) return vector;
  for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}
