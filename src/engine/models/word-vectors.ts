import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { packageUrl } from "../../package-root.js";
import type { Embedder } from "./embedder.js";

/**
 * The offline default embedder: a text's vector is the weighted average of its words' GloVe
 * vectors (assets/word-vectors.bin, built by scripts/build-word-vectors.ts), with the direction
 * that every average shares projected out (SIF: Arora et al. 2017, "A simple but tough-to-beat
 * baseline for sentence embeddings"). No model runs: a table look-up per word gives search a sense
 * of words that mean alike ("martial arts" and "taekwondo", "counseling" and "therapy"), which BM25
 * cannot see. An average blurs over a passage, so it embeds memories (one fact each) and not chunks,
 * and search weighs it low (see `similarity`): LoCoMo hybrid answer coverage at 3000 characters
 * 0.794 -> 0.802 (bench/locomo/RECIPE.md: full weight 0.779, chunks too 0.799).
 */
export const WORD_VECTORS_MODEL = "glove-6b-100d-sif";

/** The table shipped with the package. */
const ASSET = packageUrl("assets/word-vectors.bin");

/** "MCWV" read as a little-endian u32: the table's magic number. */
export const TABLE_MAGIC = 0x5657434d;

/**
 * How likely a word is, from its frequency rank (0 = most frequent): Zipf's law, p(r) = 0.1 / r,
 * which English follows closely (the table keeps GloVe's frequency order).
 */
export const zipfProbability = (index: number): number => 0.1 / (index + 1);

/** SIF's smoothing constant: a word more frequent than 1 in 1000 weighs less than half. */
const SIF_A = 1e-3;

/** A word's weight in the average, a / (a + p(w)): frequent words say little. */
export const sifWeight = (index: number): number => SIF_A / (SIF_A + zipfProbability(index));

interface Table {
  dims: number;
  /** The unit direction every average shares. */
  common: Float32Array;
  /** Per word: its components' scale times its SIF weight. */
  weights: Float32Array;
  components: Int8Array;
  index: WordIndex;
}

/**
 * Word -> its row in the table: an open-addressing hash table over the table's own bytes (its
 * words, one a line). A Map of the 50k words made 50k strings and cost a cold start's first search
 * 15-50 ms and the process several MiB; this reads the bytes once into two integer arrays. As with a
 * Map built in row order, a word listed twice gives its last row.
 */
export class WordIndex {
  private readonly starts: Int32Array;
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(private readonly bytes: Uint8Array) {
    // One pass over the bytes finds each word's start and hash; local variables only: it runs
    // once per process, mostly before V8 optimizes it.
    const found = [0];
    const hashes: number[] = [];
    let hash = FNV_OFFSET;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i] as number;
      if (byte === NEWLINE) {
        hashes.push(hash);
        found.push(i + 1);
        hash = FNV_OFFSET;
      } else hash = Math.imul(hash ^ byte, FNV_PRIME);
    }
    hashes.push(hash);
    const starts = Int32Array.from(found);
    const rows = starts.length;
    let size = 1;
    while (size < rows * 2) size <<= 1;
    const mask = size - 1;
    const slots = new Int32Array(size).fill(-1);
    this.starts = starts;
    this.slots = slots;
    this.mask = mask;
    for (let row = 0; row < rows; row++) {
      const start = starts[row] as number;
      const end = row + 1 < rows ? (starts[row + 1] as number) - 1 : bytes.length;
      let slot = (hashes[row] as number) & mask;
      for (let held = slots[slot] as number; held >= 0; held = slots[slot] as number) {
        if (this.rowIs(held, bytes, start, end)) break; // listed twice: the last row wins
        slot = (slot + 1) & mask;
      }
      slots[slot] = row;
    }
  }

  get size(): number {
    return this.starts.length;
  }

  /** The row of `word`, or undefined when the table lacks it. */
  get(word: string): number | undefined {
    // Words are ASCII (the embedder looks up [a-z]+): their characters are their UTF-8 bytes.
    const key = ASCII.test(word)
      ? Uint8Array.from(word, (c) => c.charCodeAt(0))
      : new TextEncoder().encode(word);
    let hash = FNV_OFFSET;
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ (key[i] as number), FNV_PRIME);
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const row = this.slots[slot] as number;
      if (row < 0) return undefined;
      if (this.rowIs(row, key, 0, key.length)) return row;
    }
  }

  /** Whether row `row`'s word is the bytes of `other` from `start` to `end`. */
  private rowIs(row: number, other: Uint8Array, start: number, end: number): boolean {
    const from = this.starts[row] as number;
    const to = row + 1 < this.starts.length ? (this.starts[row + 1] as number) - 1 : this.bytes.length;
    if (to - from !== end - start) return false;
    for (let i = 0; i < to - from; i++) if (this.bytes[from + i] !== other[start + i]) return false;
    return true;
  }
}

const NEWLINE = 0x0a;
/** A word of these characters is its own UTF-8 bytes: no encoding needed to hash or compare it. */
const ASCII = /^[^\u0080-\uffff]*$/;
/** FNV-1a, 32 bits. */
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

function readTable(path: URL | string): Table {
  const buf = readFileSync(path);
  const header = new Uint32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + 16));
  const [magic, version, count = 0, dims = 0] = header;
  if (magic !== TABLE_MAGIC || version !== 1) throw new Error(`${String(path)} is not a word-vector table`);
  // Views of the file's own memory where it is aligned (a file this large gets a buffer of its own,
  // at offset 0), copies otherwise: copying held the 5 MB table twice until the file was collected.
  const floats = (at: number, n: number) =>
    (buf.byteOffset + at) % 4 === 0
      ? new Float32Array(buf.buffer, buf.byteOffset + at, n)
      : new Float32Array(buf.buffer.slice(buf.byteOffset + at, buf.byteOffset + at + n * 4));
  let at = 16;
  const common = floats(at, dims);
  at += dims * 4;
  const weights = floats(at, count);
  for (let i = 0; i < count; i++) weights[i] = (weights[i] as number) * sifWeight(i);
  at += count * 4;
  const components = new Int8Array(buf.buffer, buf.byteOffset + at, count * dims);
  at += count * dims;
  const index = new WordIndex(buf.subarray(at));
  if (index.size !== count) throw new Error(`${String(path)}: ${index.size} words, the header says ${count}`);
  return { dims, common, weights, components, index };
}

export class WordVectorEmbedder implements Embedder {
  readonly model = WORD_VECTORS_MODEL;
  /**
   * Its cosine counts at 0.3, and not at all under 0.3, where unrelated texts reach (bench/locomo,
   * hybrid at 3000: 0.799 without the floor, 0.802 with it at 0.3 or 0.4).
   */
  similarity(cosine: number): number {
    return cosine < 0.3 ? 0 : 0.3 * Math.min(1, cosine);
  }
  readonly units = "memories";
  private table: Table | null = null;

  /** Checks that the table is there (reading it waits for the first text). */
  constructor(private readonly path: URL | string = ASSET) {
    if (!existsSync(path)) {
      throw new Error(
        `memctx's word-vector table is missing (${path instanceof URL ? fileURLToPath(path) : path}): reinstall memctx, or set MEMCTX_EMBEDDINGS=none to search without it`,
      );
    }
  }

  get dimensions(): number {
    return this.load().dims;
  }

  /** Reads the table (5.6 MB, ~40 ms) on first use: starting the engine costs nothing until text arrives. */
  private load(): Table {
    this.table ??= readTable(this.path);
    return this.table;
  }

  preload(): void {
    this.load();
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.vector(t));
  }

  /** The unit vector of one text; all zeros when none of its words is known. */
  vector(text: string): Float32Array {
    const { dims, common, weights, components, index } = this.load();
    const sum = new Float32Array(dims);
    for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
      const i = index.get(word);
      if (i === undefined) continue;
      const w = weights[i] as number;
      for (let d = 0, base = i * dims; d < dims; d++)
        sum[d] = (sum[d] as number) + w * (components[base + d] as number);
    }
    let along = 0;
    for (let d = 0; d < dims; d++) along += (sum[d] as number) * (common[d] as number);
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      const x = (sum[d] as number) - along * (common[d] as number);
      sum[d] = x;
      norm += x * x;
    }
    norm = Math.sqrt(norm);
    if (norm > 0) for (let d = 0; d < dims; d++) sum[d] = (sum[d] as number) / norm;
    return sum;
  }
}
