/** Turns texts into unit-length vectors, one per text, in order. */
export interface Embedder {
  readonly model: string;
  /**
   * The length of every vector. Known up front when configured or when the model is a known one;
   * otherwise 0 until the first successful `embed` call has seen a vector.
   */
  readonly dimensions: number;
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /**
   * What a cosine of this embedder's vectors says, as a similarity in [0, 1] for fusion
   * (search/fusion.ts). Absent: the cosine itself, clamped (a sentence-embedding model). A weaker
   * signal maps lower, so that it reorders what BM25 found more than it adds.
   */
  similarity?(cosine: number): number;
  /**
   * What it embeds: "all" units (chunks and memories; the default) or "memories" only, for an
   * embedder whose vectors blur over a passage (an average of word vectors).
   */
  readonly units?: "all" | "memories";
  /** Reads what embedding needs (a table) now, not at the first text; absent when nothing is to read. */
  preload?(): void;
}

/** Whether `embedder` embeds chunks (not only memories). */
export const embedsChunks = (embedder: Embedder | null | undefined): embedder is Embedder =>
  !!embedder && embedder.units !== "memories";
