/**
 * The speed benchmarks' corpus: deterministic conversation-like turns whose words follow a Zipf
 * law over LoCoMo's own vocabulary (so query words have realistic document frequencies), each turn
 * one chunk and one memory; queries are LoCoMo's questions. Seeded straight into the store through
 * the engine's own write path (documents store + the dreamer's commit), not through extraction.
 */
import type { Engine } from "../../src/engine/index.js";
import { chunkText } from "../../src/engine/ingest/chunk.js";
import type { Fact } from "../../src/engine/memory/relations.js";
import { storeDocument } from "../../src/engine/services/documents.js";
import { transaction } from "../../src/engine/store/db.js";
import { commitDocumentGeneration } from "../../src/engine/store/document-commit.js";
import { getDocumentRow, setDreamingStatus } from "../../src/engine/store/documents.js";
import { claimJob, completeJob } from "../../src/engine/store/jobs.js";
import { insertMemories, type NewMemoryRow } from "../../src/engine/store/memories.js";
import { ensureNamespace } from "../../src/engine/store/namespaces.js";
import { ensureOrganization, LOCAL_ORGANIZATION } from "../../src/engine/store/organizations.js";
import { loadSamples, type Sample, sessions } from "../locomo/data.js";

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const TURNS_PER_DOCUMENT = 10;

export class Corpus {
  private readonly rand = mulberry32(42);
  private readonly vocabulary: string[];
  private readonly cumulative: Float64Array;
  readonly people: string[];
  readonly questions: string[];

  constructor(samples: Sample[] | null = loadSamples()) {
    const counts = new Map<string, number>();
    const speakers = new Set<string>();
    const questions: string[] = [];
    for (const s of samples ?? []) {
      for (const sess of sessions(s))
        for (const t of sess.turns) {
          speakers.add(t.speaker);
          for (const w of t.text.toLowerCase().match(/[a-z']+/g) ?? [])
            counts.set(w, (counts.get(w) ?? 0) + 1);
        }
      for (const q of s.qa) questions.push(q.question);
    }
    this.vocabulary = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([w]) => w);
    const syllables = "ka lo mi ne ru sa te vi zo pa be do fu gi ha ja ko lu ma ni po qu re si tu".split(" ");
    while (this.vocabulary.length < 30_000) {
      let w = "";
      for (let i = 2 + Math.floor(this.rand() * 3); i > 0; i--)
        w += syllables[Math.floor(this.rand() * syllables.length)];
      this.vocabulary.push(w);
    }
    this.cumulative = new Float64Array(this.vocabulary.length);
    let total = 0;
    for (let r = 0; r < this.vocabulary.length; r++) this.cumulative[r] = total += 1 / (r + 1);
    const extra =
      "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Olivia Peggy Rupert Sybil Trent Victor".split(
        " ",
      );
    this.people = [...speakers, ...extra];
    if (questions.length === 0) {
      for (let i = 0; i < 500; i++) questions.push(`What did ${this.person()} say about ${this.word()}?`);
    }
    // A fixed shuffle: consecutive queries should not share a conversation.
    this.questions = questions
      .map((q, i) => ({ q, k: mulberry32(i + 1)() }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.q);
  }

  word(): string {
    const x = this.rand() * this.cumulative[this.cumulative.length - 1]!;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.vocabulary[lo]!;
  }

  person(): string {
    return this.people[Math.floor(this.rand() * this.people.length)]!;
  }

  /** One conversation document: its transcript and one fact per turn. */
  document(i: number): { text: string; date: string; facts: Fact[] } {
    const day = new Date(Date.UTC(2022, 0, 1) + (i % 900) * 86_400_000).toISOString().slice(0, 10);
    const lines: string[] = [];
    const facts: Fact[] = [];
    let at = 0;
    for (let t = 0; t < TURNS_PER_DOCUMENT; t++) {
      const who = this.person();
      const words = Array.from({ length: 8 + Math.floor(this.rand() * 10) }, () => this.word()).join(" ");
      const line = `${who}: ${words}.`;
      facts.push({
        memory: `${who} ${words} (${day}).`,
        isStatic: false,
        subject: who.toLowerCase(),
        attribute: null,
        eventDate: day,
        source: { start: at, end: at + line.length },
      });
      lines.push(line);
      at += line.length + 1;
    }
    return { text: lines.join("\n"), date: day, facts };
  }

  /** Plain texts for a store that keeps text (the reference server's observations). */
  observation(): { who: string; text: string } {
    const who = this.person();
    const words = Array.from({ length: 8 + Math.floor(this.rand() * 10) }, () => this.word()).join(" ");
    return { who, text: `${who} ${words}.` };
  }
}

/**
 * Seeds documents `from` to `to` (each one conversation of TURNS_PER_DOCUMENT turns, one memory
 * per turn) into `namespace`: addDocument, then the pipeline's own indexDocument (real chunking)
 * and the store's insertMemories (insertMemory's rows, many per statement) in the same
 * transaction, as instant dreaming stores them; the queued processing jobs are then claimed and
 * completed, so no worker redoes them.
 * Not the dreamer's commitFacts: its relation detection (a duplicate / update look-up per fact)
 * seeded 10k memories in 100 s here, so 100k would take most of an hour.
 * Call with the engine opened with `workers: 0`.
 */
const vectorOf = (model: string, embedding: Float32Array | undefined) =>
  embedding ? { model, embedding } : undefined;

export async function seedDocuments(
  engine: Engine,
  corpus: Corpus,
  namespace: string,
  from: number,
  to: number,
): Promise<void> {
  const db = engine.context.db;
  const embedder = engine.context.embedder;
  const ns = await ensureNamespace(db, (await ensureOrganization(db, LOCAL_ORGANIZATION)).id, namespace);
  for (let start = from; start < to; start += 100) {
    const docs = Array.from({ length: Math.min(to, start + 100) - start }, (_, k) =>
      corpus.document(start + k),
    );
    // Each memory's vector, as the dreamer adds it with the engine's embedder.
    const vectors = embedder ? await embedder.embed(docs.flatMap((d) => d.facts.map((f) => f.memory))) : [];
    let v = 0;
    // One transaction per 100 documents; their 1,000 memories a few statements at a time
    // (insertMemories), which is what keeps 100k memories to minutes on PostgreSQL, where every
    // statement is a round trip.
    await transaction(db, async () => {
      const memories: NewMemoryRow[] = [];
      const ids: string[] = [];
      for (const [k, d] of docs.entries()) {
        const i = start + k;
        const { id } = await storeDocument(db, ns, {
          content: d.text,
          customId: `seed-${i}`,
          date: d.date,
          dreaming: "instant",
        });
        ids.push(id);
        const row = (await getDocumentRow(db, id))!;
        await commitDocumentGeneration(db, { id, namespaceId: row.namespace_id }, row.generation, {
          text: d.text,
          format: "conversation",
          title: null,
          type: "text",
          url: null,
          chunks: chunkText(d.text, { format: "conversation" }),
        });
        for (const f of d.facts) {
          memories.push({
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
            vector: embedder ? vectorOf(embedder.model, vectors[v++]) : undefined,
          });
        }
      }
      await insertMemories(db, memories);
      await setDreamingStatus(db, ids, "done");
    });
    // The queued processing jobs of these documents, claimed and completed so no worker redoes them.
    for (
      let job = await claimJob(db, ["document"], "bench-seed", 60_000);
      job;
      job = await claimJob(db, ["document"], "bench-seed", 60_000)
    )
      await completeJob(db, job.id, "bench-seed");
  }
}
