/**
 * Dreaming throughput: how fast a burst of short documents gets its memories, and what committing
 * one fact costs (relation detection included) as a namespace grows.
 *
 *   npx tsx bench/dream-throughput.ts                 # ingest 1000 docs + commit cost at 1k, 10k
 *   npx tsx bench/dream-throughput.ts --sizes 1000,10000,100000 --docs 1000
 *   npx tsx bench/dream-throughput.ts --skip-ingest   # only the commit cost
 *
 * Ingest: as bench/suite/ingest.ts (default engine: 2 workers, offline extractor, dynamic dreaming
 * with its debounce; 8 concurrent adds through MemoryClient over engine.fetch): docs/s to `done`
 * and to memories ready, plus when the first and last dream batch ran.
 * Commit cost: a namespace seeded with N memories (bench/suite/corpus.ts's seedDocuments), then
 * the next documents' facts (offline extractor) committed with the dreamer's commitFacts, one
 * document per transaction as a dream batch does; per-fact time and per-document extraction time.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryClient } from "../src/client/index.js";
import { openEngine } from "../src/engine/index.js";
import { commitFacts } from "../src/engine/memory/dreamer.js";
import { OfflineExtractor } from "../src/engine/memory/extract/offline.js";
import type { ExtractionInput } from "../src/engine/memory/extract/types.js";
import type { Fact } from "../src/engine/memory/relations.js";
import { storeDocument } from "../src/engine/services/documents.js";
import { type Db, transaction } from "../src/engine/store/db.js";
import { getDocumentRow } from "../src/engine/store/documents.js";
import { insertMemory } from "../src/engine/store/memories.js";
import { ensureNamespace, type NamespaceRow } from "../src/engine/store/namespaces.js";
import { ensureOrganization, LOCAL_ORGANIZATION } from "../src/engine/store/organizations.js";
import { Corpus, TURNS_PER_DOCUMENT } from "./suite/corpus.js";

const API_KEY = "mk_bench_dream_0123456789";
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
};
const flag = (name: string) => process.argv.includes(`--${name}`);
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

async function ingest(documents: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "memctx-bench-dream-"));
  // The default extractor, counted: a document extracted twice (two batches at once) shows.
  const offline = new OfflineExtractor();
  let extractions = 0;
  const extractor = {
    name: offline.name,
    extract: (input: ExtractionInput, signal?: AbortSignal) => {
      extractions++;
      return offline.extract(input, signal);
    },
  };
  const engine = await openEngine({
    dataDir: dir,
    apiKey: API_KEY,
    embedder: null,
    extractor,
    log: () => {},
  });
  const client = new MemoryClient({ apiKey: API_KEY, fetch: (r) => engine.fetch(r), maxRetries: 0 });
  const corpus = new Corpus();
  const docs = Array.from({ length: documents }, (_, i) => corpus.document(i));
  const ns = client.ns("ingest");
  const db = engine.context.db;
  const count = async (where: string) =>
    ((await db.prepare(`SELECT count(*) AS n FROM documents WHERE ${where}`).get()) as { n: number }).n;
  let accepted = 0;
  let toDone: number | null = null;
  let toMemories: number | null = null;
  let firstDreamed: number | null = null;
  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < docs.length) {
          const d = docs[next++]!;
          await ns.documents.add({ content: d.text, date: d.date });
          accepted++;
        }
      }),
    );
    const acceptedAt = elapsed();
    const deadline = 300;
    while (elapsed() < deadline) {
      const dreamed = count("dreaming_status = 'done'");
      if (firstDreamed === null && (await dreamed) > 0) firstDreamed = elapsed();
      if (toDone === null && (await count("status = 'done'")) >= accepted) toDone = elapsed();
      if (toMemories === null && (await dreamed) >= accepted) toMemories = elapsed();
      if (toDone !== null && toMemories !== null) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const rows = async (t: string) =>
      ((await db.prepare(`SELECT count(*) AS n FROM ${t}`).get()) as { n: number }).n;
    console.log(
      `ingest ${accepted} docs (${TURNS_PER_DOCUMENT} turns each): accepted ${round(accepted / acceptedAt, 1)}/s; ` +
        `done in ${round(toDone ?? Number.NaN)} s = ${round(accepted / (toDone ?? Number.NaN), 1)} docs/s; ` +
        `memories ready in ${round(toMemories ?? Number.NaN)} s = ${round(accepted / (toMemories ?? Number.NaN), 1)} docs/s ` +
        `(first document dreamed at ${round(firstDreamed ?? Number.NaN)} s); ` +
        `${extractions} extractions, ${await rows("memories")} memories, ${await rows("memory_sources")} sources, ${await rows("memory_relations")} relations`,
    );
  } finally {
    await client.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Seeds `count` documents and their corpus facts straight into the store (insertMemory, as
 * bench/suite/corpus.ts's seedDocuments does, without chunks: the memory look-ups never read them).
 */
async function seed(db: Db, ns: NamespaceRow, corpus: Corpus, count: number): Promise<void> {
  for (let start = 0; start < count; start += 100) {
    await transaction(db, async () => {
      for (let i = start; i < Math.min(count, start + 100); i++) {
        const d = corpus.document(i);
        const { id } = await storeDocument(db, ns, { content: d.text, date: d.date, dreaming: "instant" });
        for (const f of d.facts) {
          await insertMemory(db, {
            namespaceId: ns.id,
            memory: f.memory,
            metadata: {},
            isStatic: f.isStatic,
            isInference: false,
            subject: f.subject,
            attribute: f.attribute,
            eventDate: f.eventDate,
            forgetAfter: null,
            documentId: id,
            source: f.source,
          });
        }
        await db
          .prepare("UPDATE documents SET status = 'done', dreaming_status = 'done' WHERE id = ?")
          .run(id);
      }
    });
  }
  await db.prepare("DELETE FROM jobs").run();
}

async function commitCost(size: number, measureDocs: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "memctx-bench-dream-"));
  const engine = await openEngine({ dataDir: dir, embedder: null, workers: 0, log: () => {} });
  const db = engine.context.db;
  try {
    const corpus = new Corpus();
    const seedDocs = Math.ceil(size / TURNS_PER_DOCUMENT);
    const s0 = performance.now();
    const ns = await ensureNamespace(db, (await ensureOrganization(db, LOCAL_ORGANIZATION)).id, "dream");
    await seed(db, ns, corpus, seedDocs);
    const seedSeconds = (performance.now() - s0) / 1000;
    const extractor = new OfflineExtractor();
    const work: { row: NonNullable<Awaited<ReturnType<typeof getDocumentRow>>>; facts: Fact[] }[] = [];
    let extractMs = 0;
    for (let i = 0; i < measureDocs; i++) {
      const d = corpus.document(seedDocs + i);
      const { id } = await storeDocument(db, ns, { content: d.text, date: d.date });
      await db.prepare("UPDATE documents SET status = 'done' WHERE id = ?").run(id);
      const row = (await getDocumentRow(db, id))!;
      const t = performance.now();
      const facts = (await extractor.extract({
        text: d.text,
        format: "conversation",
        documentDate: d.date,
      })) as Fact[];
      extractMs += performance.now() - t;
      work.push({ row, facts });
    }
    const before = ((await db.prepare("SELECT count(*) AS n FROM memories").get()) as { n: number }).n;
    let facts = 0;
    const outcomes = new Map<string, number>();
    const t = performance.now();
    for (const w of work) {
      for (const a of await commitFacts(db, w.row, w.row.generation, w.facts))
        outcomes.set(a.outcome, (outcomes.get(a.outcome) ?? 0) + 1);
      facts += w.facts.length;
    }
    const commitMs = performance.now() - t;
    console.log(
      `commit at ${before} memories (seeded in ${round(seedSeconds, 1)} s): ${facts} facts of ${measureDocs} docs, ` +
        `${round(commitMs / facts, 3)} ms/fact commit, ${round(extractMs / facts, 3)} ms/fact extract ` +
        `(${round(facts / ((commitMs + extractMs) / 1000), 0)} facts/s together); ` +
        `outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`,
    );
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sizes = arg("sizes", "1000,10000").split(",").map(Number);
const documents = Number(arg("docs", "1000"));
const measureDocs = Number(arg("measure", "100"));
if (!flag("skip-commit")) for (const size of sizes) await commitCost(size, measureDocs);
if (!flag("skip-ingest")) await ingest(documents);
