/**
 * LoCoMo answer coverage for memctx's retrieval recipe.
 *   npx tsx bench/locomo/run.ts [--budget 2000,3000,6000] [--mode hybrid|chunks|memories|all] [--check] [--engine]
 * Recipe knobs (defaults = RECIPE.md): --neighbours --context-weight --chunk-weight --memory-weight
 * --other-person --novelty --no-dedup --threshold --limit --window --tokenizer; --data PATH.
 * --check also reruns the README's BM25 dated-turns baseline through the ported metric (0.636/0.686/0.734).
 * --engine measures the real engine (src/engine, in process, offline defaults) instead of the in-bench recipe:
 * one data directory holding one namespace per sample (the README's way), or with --store-per-sample one
 * data directory per sample, so that no term statistic comes from another conversation (see RECIPE.md).
 * --held-out conv-42,conv-43 also reports those samples alone (and the rest alone), so that a rule
 * designed while reading the other samples' questions is checked on conversations it was not fitted to.
 * --captions ends each turn that shared an image with "[shares <the data's caption>]" (off by default:
 * the README's transcript has no captions, and figures compare only with the same setting).
 */
import { parseArgs } from "node:util";
import { type ExtractedFact, OfflineExtractor } from "../../src/engine/memory/extract/index.js";
import { bm25Baseline } from "./baseline.js";
import { DATA_PATH, loadSamples, type Sample, sessions, transcript } from "./data.js";
import { engineRun } from "./engine.js";
import { coverage } from "./metric.js";
import { DEFAULT_RECIPE, type Mode, type RecipeOptions, type Unit, UnitIndex } from "./retrieval.js";
import { chunkUnits, memoryUnits } from "./units.js";

const { values } = parseArgs({
  options: {
    budget: { type: "string", default: "2000,3000,6000" },
    mode: { type: "string", default: "all" },
    check: { type: "boolean", default: false },
    engine: { type: "boolean", default: false },
    "store-per-sample": { type: "boolean", default: false },
    "held-out": { type: "string", default: "" },
    captions: { type: "boolean", default: false },
    data: { type: "string", default: DATA_PATH },
    window: { type: "string", default: "1" },
    neighbours: { type: "string", default: "3" },
    "memory-weight": { type: "string", default: String(DEFAULT_RECIPE.memoryWeight) },
    "chunk-weight": { type: "string", default: String(DEFAULT_RECIPE.chunkWeight) },
    "other-person": { type: "string", default: String(DEFAULT_RECIPE.otherPersonFactor) },
    "no-dedup": { type: "boolean", default: false },
    novelty: { type: "string", default: String(DEFAULT_RECIPE.novelty) },
    threshold: { type: "string", default: String(DEFAULT_RECIPE.threshold) },
    limit: { type: "string", default: String(DEFAULT_RECIPE.limit) },
    tokenizer: { type: "string", default: "porter unicode61" },
    "context-weight": { type: "string", default: String(DEFAULT_RECIPE.contextWeight) },
  },
});

const data = loadSamples(values.data);
if (data === null) {
  console.log(`skipped: LoCoMo data not found at ${values.data} (see ../shared/data/locomo/README.md)`);
  process.exit(0);
}
if (values.captions && !values.engine) {
  // The in-bench recipe maps facts to turns by the README's transcript (units.ts).
  console.error("--captions measures the engine only: add --engine");
  process.exit(2);
}
const budgets = values.budget.split(",").map(Number);
const modes: Mode[] = values.mode === "all" ? ["chunks", "memories", "hybrid"] : [values.mode as Mode];
const recipe: RecipeOptions = {
  ...DEFAULT_RECIPE,
  memoryWeight: Number(values["memory-weight"]),
  chunkWeight: Number(values["chunk-weight"]),
  otherPersonFactor: Number(values["other-person"]),
  dedup: !values["no-dedup"],
  novelty: Number(values.novelty),
  threshold: Number(values.threshold),
  limit: Number(values.limit),
  contextWeight: Number(values["context-weight"]),
};

if (values.check) {
  for (const b of budgets) {
    const { figure, n } = bm25Baseline(data, b);
    console.log(
      `check: bm25 dated turns (reference_score.py port) questions=${n} coverage@${b}=${figure.toFixed(3)}`,
    );
  }
}

// Extraction: every session of every sample, timed.
const extractor = new OfflineExtractor();
const facts = new Map<string, ExtractedFact[]>();
let turnCount = 0;
let factCount = 0;
// Warm up (model load) so the figure is the steady extraction rate.
await extractor.extract({
  text: "Caroline: I moved to Berlin yesterday.",
  format: "conversation",
  documentDate: "2023-05-08",
});
const t0 = performance.now();
for (const sample of data) {
  for (const s of sessions(sample)) {
    const f = await extractor.extract({
      text: transcript(s, { captions: values.captions }),
      format: "conversation",
      documentDate: s.date,
    });
    facts.set(`${sample.sample_id}/${s.key}`, f);
    turnCount += s.turns.length;
    factCount += f.length;
  }
}
const seconds = (performance.now() - t0) / 1000;
console.log(
  `extraction (${extractor.name}): ${turnCount} turns -> ${factCount} memories in ${seconds.toFixed(2)} s ` +
    `(${Math.round(turnCount / seconds)} turns/s, ${Math.round(factCount / seconds)} memories/s)`,
);

const CATEGORIES = [1, 2, 3, 4];
const NAMES: Record<number, string> = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop" };
const window = Number(values.window);
const neighbours = Number(values.neighbours);

type Sums = Map<string, { sum: number; n: number }>;

const heldOut = new Set(values["held-out"].split(",").filter((s) => s !== ""));

function score(sample: Sample, search: (question: string) => string[] | Promise<string[]>, sums: Sums) {
  const part = heldOut.size === 0 ? null : heldOut.has(sample.sample_id) ? "held-out" : "fitted";
  return (async () => {
    for (const q of sample.qa) {
      if (q.category === 5) continue;
      const texts = await search(q.question);
      for (const b of budgets) {
        const cov = coverage(q.answer, texts, b);
        if (cov === null) continue;
        const keys = [`${b}/all`, `${b}/${q.category}`];
        if (part) keys.push(`${part}:${b}/all`, `${part}:${b}/${q.category}`);
        for (const key of keys) {
          const e = sums.get(key) ?? { sum: 0, n: 0 };
          e.sum += cov;
          e.n++;
          sums.set(key, e);
        }
      }
    }
  })();
}

function report(label: string, sums: Sums) {
  for (const part of heldOut.size === 0 ? [""] : ["", "fitted:", "held-out:"]) {
    for (const b of budgets) {
      const all = sums.get(`${part}${b}/all`);
      if (!all) continue;
      const per = CATEGORIES.map((c) => {
        const e = sums.get(`${part}${b}/${c}`);
        return `${NAMES[c]}=${e ? (e.sum / e.n).toFixed(3) : "-"}`;
      }).join(" ");
      const name = part ? `${label} [${part.slice(0, -1)}]` : label;
      console.log(`${name.padEnd(8)} @${b}: ${(all.sum / all.n).toFixed(3)} (n=${all.n}) ${per}`);
    }
  }
}

if (values.engine) {
  const run = await engineRun(data, {
    limit: recipe.limit,
    threshold: recipe.threshold,
    storePerSample: values["store-per-sample"],
    captions: values.captions,
  });
  console.log(`engine: ingested ${turnCount} turns with memories in ${run.ingestSeconds.toFixed(1)} s`);
  for (const mode of modes) {
    const sums: Sums = new Map();
    for (const sample of data) await score(sample, (q) => run.search(sample, q, mode), sums);
    report(`engine ${mode}`, sums);
  }
  await run.close();
  process.exit(0);
}

for (const mode of modes) {
  const sums: Sums = new Map();
  for (const sample of data) {
    const units: Unit[] = [];
    for (const s of sessions(sample)) {
      units.push(...chunkUnits(sample, s, window, neighbours));
      units.push(...memoryUnits(sample, s, facts.get(`${sample.sample_id}/${s.key}`) ?? [], neighbours));
    }
    const index = new UnitIndex(units, values.tokenizer);
    await score(sample, async (q) => (await index.search(q, mode, recipe)).map((h) => h.unit.text), sums);
    index.close();
  }
  report(mode, sums);
}
