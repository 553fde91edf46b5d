import type { Metadata } from "../../api/common.js";
import type { EngineContext } from "../context.js";
import { CONTEXT_TURNS, chunkText } from "../ingest/chunk.js";
import { MEDIA_TYPES } from "../ingest/file.js";
import { dayLabel } from "../ingest/label.js";
import type { DreamContext, Dreamer, IndexingDocument } from "../pipeline/dreamer.js";
import type { JobFailureHandler } from "../pipeline/worker.js";
import { type Db, parseJson } from "../store/db.js";
import {
  commitDocumentMemories,
  type DocumentMemories,
  type DreamsWithIndex,
  queueDreams,
} from "../store/document-commit.js";
import {
  type DocumentRow,
  documentAtGeneration,
  documentsAwaitingDreams,
  getDocumentRow,
  namespacesAwaitingDreams,
} from "../store/documents.js";
import { forgottenInDocument } from "../store/forgotten.js";
import { DREAM_JOB, type JobRow } from "../store/jobs.js";
import { documentMemoryIds, memoryMetadata, recentLiveMemories } from "../store/memories.js";
import { MemoryDraft } from "../store/memory-draft.js";
import { namespaceContexts } from "../store/namespaces.js";
import { conversationTurns } from "../text/conversation.js";
import { OfflineExtractor } from "./extract/offline.js";
import { askedWords } from "./extract/slots.js";
import type { ExtractionInput, Extractor } from "./extract/types.js";
import { matchesFilterByMetadata } from "./filter-by-metadata.js";
import { type AppliedFact, applyFacts, type Fact, normalizeExpiry } from "./relations.js";

/** The job kind of a namespace's batched (dynamic) dreaming, in the shared `jobs` table. */
export { DREAM_JOB };

export interface DreamingOptions {
  /** A namespace's batch starts this long after its last indexed document... */
  debounceMs: number;
  /** ...but never later than this after the first one waiting. */
  maxWaitMs: number;
  /** Documents per batch; a full batch starts at once, the rest follows in the next. */
  maxBatch: number;
  /**
   * Memories are drawn from a document's first this many characters (the whole text is still
   * chunked and searchable): the work, and the write transaction that stores it, stay bounded.
   */
  maxExtractChars: number;
  /** Most memories one document gives. */
  maxMemories: number;
}

/** About 2 s of extraction and 2 s holding the write lock on 2 cores (bench/tmp measurements in the note). */
export const DEFAULT_DREAMING: DreamingOptions = {
  debounceMs: 2_000,
  maxWaitMs: 10_000,
  maxBatch: 50,
  maxExtractChars: 200_000,
  maxMemories: 1_000,
};

/**
 * Defaults, overridden by MEMCTX_DREAM_DEBOUNCE_MS / _MAX_WAIT_MS / _MAX_BATCH,
 * MEMCTX_EXTRACT_MAX_CHARS and MEMCTX_DOCUMENT_MAX_MEMORIES, then by `opts`.
 */
export function dreamingOptions(opts: Partial<DreamingOptions> = {}, env = process.env): DreamingOptions {
  const num = (v: string | undefined, fallback: number) => {
    const n = Number(v);
    return v !== undefined && v !== "" && Number.isFinite(n) && n >= 0 ? n : fallback;
  };
  return {
    debounceMs: opts.debounceMs ?? num(env.MEMCTX_DREAM_DEBOUNCE_MS, DEFAULT_DREAMING.debounceMs),
    maxWaitMs: opts.maxWaitMs ?? num(env.MEMCTX_DREAM_MAX_WAIT_MS, DEFAULT_DREAMING.maxWaitMs),
    maxBatch: Math.max(1, opts.maxBatch ?? num(env.MEMCTX_DREAM_MAX_BATCH, DEFAULT_DREAMING.maxBatch)),
    maxExtractChars: Math.max(
      1,
      opts.maxExtractChars ?? num(env.MEMCTX_EXTRACT_MAX_CHARS, DEFAULT_DREAMING.maxExtractChars),
    ),
    maxMemories: opts.maxMemories ?? num(env.MEMCTX_DOCUMENT_MAX_MEMORIES, DEFAULT_DREAMING.maxMemories),
  };
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Existing memories the extractor sees as context. */
const CONTEXT_MEMORIES = 50;

/**
 * `superrag` documents are for retrieval only; an image, audio or video document holds a
 * description of a file (name, type, size), and memories drawn from it would be invented.
 */
function makesNoMemories(taskType: string, type: string): boolean {
  return taskType === "superrag" || MEDIA_TYPES.has(type);
}

/**
 * Memory generation. `instant`: a document's memories are extracted before it is marked `done`
 * and stored in the same transaction that marks it (beforeIndexed), so `done` means searchable
 * memories. `dynamic` (default): a namespace's indexed documents wait in one durable `dream` job
 * that starts `debounceMs` after the last of them (at most `maxWaitMs` after the first), then are
 * dreamed oldest `documentDate` first, each document's memories and `dreamingStatus: done` in one
 * transaction. `superrag` documents get no memories. A crash leaves the job row to be claimed
 * again; a job that fails for good still sets its documents `done` (nothing waits forever).
 * Expiry: a document's metadata key `forgetAfter` (an ISO date or timestamp) becomes the
 * `forget_after` of every memory drawn from it; an extractor may also give a fact its own.
 */
export class MemoryDreamer implements Dreamer {
  readonly options: DreamingOptions;

  constructor(
    private readonly ctx: Pick<EngineContext, "db" | "queue" | "log" | "embedder"> & { extractor: Extractor },
    opts: Partial<DreamingOptions> = {},
  ) {
    this.options = dreamingOptions(opts);
  }

  /**
   * Called by the pipeline before it marks the document `done`; answers what the store commits
   * with it, in the transaction that marks it: instant dreaming extracts now and drafts the
   * memories to commit there, dynamic dreaming the namespace's batch to queue. Undefined when the
   * document is stale, or its instant extraction failed (dream() then retries it).
   */
  async beforeIndexed(doc: IndexingDocument, dctx: DreamContext): Promise<DreamsWithIndex | undefined> {
    // Dynamic: the namespace's batch is queued (or pushed back) in the transaction that marks the
    // document done, not in one of its own after it; the commit checks the generation.
    if (doc.row.dreaming !== "instant" && !makesNoMemories(doc.row.task_type, doc.type))
      return { queue: this.options };
    // Extraction is worth skipping for a document changed since the job read it.
    const row = await documentAtGeneration(dctx.db, doc.id, doc.generation);
    if (!row) return undefined;
    // No memories: committing none also takes away those an earlier version made.
    if (makesNoMemories(row.task_type, doc.type)) {
      const none = await draftFacts(dctx.db, row, doc.generation, [], null, undefined, { text: doc.text });
      return none && { memories: none };
    }
    if (row.dreaming !== "instant") return { queue: this.options };
    let facts: Extracted;
    try {
      facts = await this.extract(row, doc.text, doc.format, dctx.signal);
    } catch (err) {
      if (dctx.signal.aborted) throw err;
      // A failing extractor must not cost the document its chunks: index it, and let dream()
      // retry the memories (then a dream job, which gives up in the end: nothing waits forever).
      this.ctx.log(`instant dreaming of ${doc.id} failed, retrying after indexing: ${message(err)}`);
      return undefined;
    }
    const memories = await draftFacts(dctx.db, row, doc.generation, facts.facts, facts.note, facts.drawn, {
      text: doc.text,
    });
    return memories && { memories };
  }

  async dream(documentIds: string[], dctx: DreamContext): Promise<void> {
    const namespaces = new Set<string>();
    for (const id of documentIds) {
      const doc = await getDocumentRow(dctx.db, id);
      if (!doc || doc.dreaming_status === "done") continue;
      if (makesNoMemories(doc.task_type, doc.type)) {
        await commitFacts(dctx.db, doc, doc.generation, []);
      } else if (doc.dreaming === "instant") {
        // Reached only when beforeIndexed did not dream it (its extraction failed): once more now,
        // then in a dream job with retries.
        try {
          await this.dreamIndexed(doc, dctx.signal);
        } catch (err) {
          if (dctx.signal.aborted) throw err;
          this.ctx.log(`instant dreaming of ${id} failed, queued for a retry: ${message(err)}`);
          namespaces.add(doc.namespace_id);
        }
      } else {
        namespaces.add(doc.namespace_id);
      }
    }
    for (const ns of namespaces) await scheduleDream(dctx.db, ns, this.options);
    if (namespaces.size > 0) dctx.queue.wake();
  }

  /** Runs one namespace's batch (the `dream` job). */
  async runBatch(job: JobRow, signal: AbortSignal): Promise<void> {
    const ns = job.namespace_id;
    if (!ns) return;
    const batch = await pendingDocuments(this.ctx.db, ns, this.options.maxBatch);
    for (const doc of batch) {
      signal.throwIfAborted();
      if (makesNoMemories(doc.task_type, doc.type)) await commitFacts(this.ctx.db, doc, doc.generation, []);
      else await this.dreamIndexed(doc, signal);
    }
    if (batch.length === this.options.maxBatch && (await pendingDocuments(this.ctx.db, ns, 1)).length > 0) {
      await scheduleDream(this.ctx.db, ns, this.options, true);
      this.ctx.queue.wake();
    }
  }

  /** A dream job failed for good: its documents stop waiting, without memories. */
  readonly batchFailed: JobFailureHandler = {
    mark: (job) => (job.namespace_id ? { dreamsOf: job.namespace_id } : undefined),
    log: (job, message, marked) =>
      this.ctx.log(`dreaming gave up on ${marked} document(s) of namespace ${job.namespace_id}: ${message}`),
  };

  /** Queues a dream job for every namespace with indexed documents still waiting (after a crash). */
  async resume(): Promise<void> {
    const namespaces = await namespacesAwaitingDreams(this.ctx.db);
    for (const ns of namespaces) await scheduleDream(this.ctx.db, ns, this.options);
    if (namespaces.length > 0) this.ctx.queue.wake();
  }

  private async dreamIndexed(doc: DocumentRow, signal: AbortSignal): Promise<void> {
    // The draft begins while the facts are extracted (its reads overlap the extractor's work): a
    // write of the namespace's memories after it sends the draft back at commit all the same.
    const begun = beginDraft(this.ctx.db, doc, doc.generation);
    begun.catch(() => {});
    const { facts, note, drawn } = await this.extract(doc, doc.text ?? doc.content, doc.format, signal);
    await commitFacts(this.ctx.db, doc, doc.generation, facts, note, drawn, begun);
  }

  private async extract(
    doc: DocumentRow,
    text: string,
    format: "plain" | "conversation",
    signal: AbortSignal,
  ): Promise<Extracted> {
    const { maxExtractChars, maxMemories } = this.options;
    const appended = appendedTurns(doc, text, format, maxExtractChars);
    if (appended) {
      // Only the turns after those already drawn from; the document's own memories are context now.
      const input = await extractionInput(this.ctx.db, doc, appended.text, format, true);
      const found = appended.text ? ((await this.ctx.extractor.extract(input, signal)) as Fact[]) : [];
      const shifted = found.slice(0, maxMemories).map((f) => shiftSource(f, appended.from));
      const dreamed = await this.embed(withSourceContext(shifted, text, format, doc.document_date), signal);
      return { facts: dreamed, note: null, drawn: { chars: appended.until, appended: true } };
    }
    const notes: string[] = [];
    let read = text;
    if (text.length > maxExtractChars) {
      // Cut at the last line (else word) break before the limit, so no turn or word is split.
      const line = text.lastIndexOf("\n", maxExtractChars);
      const word = text.lastIndexOf(" ", maxExtractChars);
      const at = line > maxExtractChars / 2 ? line : word > 0 ? word : maxExtractChars;
      read = text.slice(0, at);
      notes.push(
        `memories were drawn from the first ${read.length} of ${text.length} characters (MEMCTX_EXTRACT_MAX_CHARS); the whole text is searchable`,
      );
    }
    const input = await extractionInput(this.ctx.db, doc, read, format);
    let facts = (await this.ctx.extractor.extract(input, signal)) as Fact[];
    if (facts.length > maxMemories) {
      notes.push(`kept the first ${maxMemories} of ${facts.length} memories (MEMCTX_DOCUMENT_MAX_MEMORIES)`);
      facts = facts.slice(0, maxMemories);
    }
    const dreamed = await this.embed(withSourceContext(facts, read, format, doc.document_date), signal);
    // A whole conversation read: turns appended later are drawn from alone.
    const whole =
      format === "conversation" && read === text ? conversationTurns(text).at(-1)?.end : undefined;
    return {
      facts: dreamed,
      note: notes.length > 0 ? notes.join("; ") : null,
      drawn: { chars: whole ?? null, appended: false },
    };
  }

  /** Adds each fact's vector when an embedder is configured; without one (or when it fails) memories stay lexical. */
  private async embed(facts: DreamedFact[], signal: AbortSignal): Promise<DreamedFact[]> {
    const embedder = this.ctx.embedder;
    if (!embedder || facts.length === 0) return facts;
    try {
      const vectors = await embedder.embed(
        facts.map((f) => f.memory),
        signal,
      );
      return facts.map((f, i) => {
        const embedding = vectors[i];
        return embedding ? { ...f, vector: { model: embedder.model, embedding } } : f;
      });
    } catch (err) {
      if (signal.aborted) throw err;
      this.ctx.log(`embedding memories failed, storing them without vectors: ${message(err)}`);
      return facts;
    }
  }
}

/** What extraction gave one document, and what its limits left out (recorded on the document). */
interface Extracted {
  facts: DreamedFact[];
  note: string | null;
  drawn: Drawn;
}

/**
 * How much of the text the document's memories now come from (null: not a whole conversation),
 * and whether these facts were drawn from appended turns only (the earlier turns' memories stay).
 */
interface Drawn {
  chars: number | null;
  appended: boolean;
}

/**
 * The turns appended to a conversation after those its memories were drawn from, as one text
 * starting at `from` and ending at `until` (the last turn's end); undefined when the whole text
 * must be read: no memories drawn yet, or the text or the inputs changed since (dreamed_chars is
 * cleared then), the drawn part no longer ends on a turn's end (a line appended to its last turn),
 * or the text is over the extraction limit (whose cut the whole-text path applies).
 */
export function appendedTurns(
  doc: Pick<DocumentRow, "dreamed_chars">,
  text: string,
  format: "plain" | "conversation",
  maxExtractChars: number,
): { text: string; from: number; until: number } | undefined {
  const drawn = doc.dreamed_chars;
  if (drawn === null || format !== "conversation" || text.length > maxExtractChars) return undefined;
  const turns = conversationTurns(text);
  const next = turns.findIndex((t) => t.start >= drawn);
  const last = next === -1 ? turns.at(-1) : turns[next - 1];
  if (!last || last.end !== drawn) return undefined;
  if (next === -1) return { text: "", from: drawn, until: drawn };
  const from = turns[next]!.start;
  return { text: text.slice(from), from, until: turns.at(-1)!.end };
}

/** A fact found in a part of the text, its source moved to where that part starts. */
function shiftSource(f: Fact, by: number): Fact {
  return f.source ? { ...f, source: { start: f.source.start + by, end: f.source.end + by } } : f;
}

/** A fact with what search indexes beside it (set by withSourceContext). */
export type DreamedFact = Fact & {
  /** `[day]` and the source turn with CONTEXT_TURNS turns each side (plain text: its chunk). */
  context?: string;
  /** Who said the source turn, lowercased. */
  speaker?: string | null;
};

/**
 * Gives each fact the text around its source (the memory's `context`, indexed for search at a
 * lower weight: the turn before is usually the question the fact's turn answers) and the source
 * turn's speaker (search's person factor).
 */
export function withSourceContext(
  facts: readonly Fact[],
  text: string,
  format: "plain" | "conversation",
  documentDate: string | null,
): DreamedFact[] {
  const label = dayLabel(documentDate);
  // The day, and the words a question about the fact's slot asks with ("work job" for "joined
  // Northwind as a design lead"): indexed with the text around it.
  const headOf = (f: Fact) => [label, askedWords(f.attribute)].filter(Boolean).join("\n");
  if (format === "conversation") {
    const turns = conversationTurns(text);
    return facts.map((f) => {
      const head = headOf(f) ? `${headOf(f)}\n` : "";
      const at = f.source?.start;
      if (at === undefined || turns.length === 0) return { ...f, context: headOf(f) };
      let i = 0;
      while (i + 1 < turns.length && turns[i + 1]!.start <= at) i++;
      const around = turns
        .slice(Math.max(0, i - CONTEXT_TURNS), i + CONTEXT_TURNS + 1)
        .map((t) => text.slice(t.start, t.end));
      const role = turns[i]!.role;
      return { ...f, context: head + around.join("\n"), speaker: role ? role.toLowerCase() : null };
    });
  }
  // Plain text: the chunk the fact was drawn from.
  const chunks = facts.some((f) => f.source) ? chunkText(text, { format }) : [];
  return facts.map((f) => {
    const at = f.source?.start;
    const chunk = at === undefined ? undefined : chunks.find((c) => c.start <= at && at < c.end);
    const head = headOf(f) ? `${headOf(f)}\n` : "";
    return { ...f, context: head + (chunk?.content ?? "") };
  });
}

/** Drafts of one document's memories committed at most this many times while others' change them. */
const DRAFT_ATTEMPTS = 5;

/**
 * Stores a document's facts and marks it `dreamingStatus: done`, in one store operation (drafted,
 * then committed: draftFacts, store/document-commit.ts); nothing when the document changed (a
 * newer generation dreams instead), was deleted, or was dreamed by another worker meanwhile.
 * Drafted again when the namespace's memories changed before the commit.
 */
export async function commitFacts(
  db: Db,
  doc: DocumentRow,
  generation: number,
  facts: readonly DreamedFact[],
  note: string | null = null,
  drawn: Drawn = { chars: null, appended: false },
  /** The first draft's beginning, when the caller began it already (beginDraft). */
  begun?: ReturnType<typeof beginDraft>,
): Promise<AppliedFact[]> {
  for (let attempt = 1; ; attempt++) {
    // Only the first draft was begun by the caller: another begins anew.
    const memories = await draftFacts(
      db,
      doc,
      generation,
      facts,
      note,
      drawn,
      attempt === 1 ? { begun } : {},
    );
    if (!memories) return [];
    const ref = { id: doc.id, namespaceId: doc.namespace_id };
    const outcome = await commitDocumentMemories(db, ref, generation, memories);
    if (outcome !== "redraft") return outcome === "committed" ? memories.applied : [];
    if (attempt === DRAFT_ATTEMPTS)
      throw new Error(`the memories of document ${doc.id}'s namespace kept changing while they were drafted`);
  }
}

/**
 * A draft's beginning: the document at `generation` (undefined when it changed or was deleted)
 * and a MemoryDraft of its namespace. Begun before anything the draft decides from is read: a
 * write of the namespace's memories after it makes the commit draft again. The two reads go side
 * by side (each on a connection of its own where the database is a server).
 */
export function beginDraft(
  db: Db,
  doc: DocumentRow,
  generation: number,
): Promise<[DocumentRow | undefined, MemoryDraft]> {
  return Promise.all([documentAtGeneration(db, doc.id, generation), MemoryDraft.begin(db, doc.namespace_id)]);
}

/**
 * A document's facts as memories, drafted (relations.ts applyFacts into a store MemoryDraft)
 * outside any transaction, for the store to commit with the document; undefined when the document
 * changed or was deleted.
 */
export async function draftFacts(
  db: Db,
  doc: DocumentRow,
  generation: number,
  facts: readonly DreamedFact[],
  note: string | null = null,
  drawn: Drawn = { chars: null, appended: false },
  opts: {
    /** The text the facts' sources point into, when it is not yet the stored one (a generation being indexed). */
    text?: string;
    /** The draft's beginning, when the caller began it already (beginDraft). */
    begun?: ReturnType<typeof beginDraft> | undefined;
  } = {},
): Promise<(Omit<DocumentMemories, "applied"> & { applied: AppliedFact[] }) | undefined> {
  const [current, draft] = await (opts.begun ?? beginDraft(db, doc, generation));
  if (!current) return undefined;
  const metadata = parseJson<Metadata>(doc.metadata, {});
  const told = facts.filter((f) => f.memory.trim() !== "");
  // Nothing is remembered again from a sentence the user forgot (memory/forget.ts); reading ahead
  // for a fact left out for it costs nothing but its share of one statement.
  const [forgotten, sourceOf] = await Promise.all([
    forgottenInDocument(db, doc.id, opts.text),
    // What the document said before, for the commit to take away what it no longer says (appended
    // turns take nothing away).
    drawn.appended ? undefined : documentMemoryIds(db, doc.id),
    draft.readAhead(told),
  ]);
  // applyFacts skips empty facts: leave them out here so its results line up with `kept`.
  const kept = told.filter((f) => !forgotten.holds(f.source));
  const applied = await applyFacts(
    draft,
    {
      namespaceId: doc.namespace_id,
      documentId: doc.id,
      metadata,
      forgetAfter: normalizeExpiry(metadata.forgetAfter),
      filterByMetadata: parseJson<Metadata | null>(doc.filter_by_metadata, null),
    },
    kept,
  );
  return { draft, applied, drawnChars: drawn.chars, appended: drawn.appended, note, sourceOf };
}

/** What the extractor reads: the text, its date, the three contexts and the allowed existing memories. */
export async function extractionInput(
  db: Db,
  doc: DocumentRow,
  text: string,
  format: "plain" | "conversation",
  /** Appended turns: the memories of the turns before are context like any other. */
  ownAsContext = false,
): Promise<ExtractionInput> {
  const filter = parseJson<Metadata | null>(doc.filter_by_metadata, null);
  // Two reads side by side (each on a connection of its own where the database is a server). A
  // re-sent document's own memories are not context: told again, its facts must come out again
  // (to be merged into those memories, with its new metadata), not be skipped as known. Without a
  // metadata filter the most recent others are the context; with one, four times as many are
  // read for it to choose from.
  const [ctx, recent] = await Promise.all([
    namespaceContexts(db, doc.namespace_id),
    recentLiveMemories(
      db,
      doc.namespace_id,
      filter === null ? CONTEXT_MEMORIES : CONTEXT_MEMORIES * 4,
      ownAsContext ? undefined : doc.id,
    ),
  ]);
  const existing = recent
    .filter((m) => matchesFilterByMetadata(memoryMetadata(m), filter))
    .slice(0, CONTEXT_MEMORIES)
    .map((m) => ({ id: m.id, memory: m.memory }));
  return {
    text,
    format,
    documentDate: doc.document_date,
    title: doc.title,
    entityContext: doc.supporting_context,
    supportingContext: ctx?.supportingContext ?? null,
    organizationalContext: ctx?.organizationalContext ?? null,
    existing,
  };
}

/** Indexed documents of a namespace still waiting for memories, oldest `documentDate` first. */
export async function pendingDocuments(db: Db, namespaceId: string, limit: number): Promise<DocumentRow[]> {
  return await documentsAwaitingDreams(db, namespaceId, limit);
}

/**
 * Queues (or pushes back) the namespace's dream job: it runs `debounceMs` after now, but no later
 * than `maxWaitMs` after the job was first queued, and at once when a full batch is waiting
 * (store/document-commit.ts queueDreams).
 */
export async function scheduleDream(
  db: Db,
  namespaceId: string,
  o: DreamingOptions,
  immediate = false,
): Promise<void> {
  await queueDreams(db, namespaceId, o, immediate);
}

/**
 * Installs memory generation on an open engine: registers the `dream` job with its workers,
 * resumes batches a crash left behind, and returns the Dreamer for the pipeline to call.
 */
export function installDreaming(ctx: EngineContext, opts: Partial<DreamingOptions> = {}): MemoryDreamer {
  const dreamer = new MemoryDreamer(
    {
      db: ctx.db,
      queue: ctx.queue,
      log: ctx.log,
      embedder: ctx.embedder,
      extractor: ctx.extractor ?? new OfflineExtractor(),
    },
    opts,
  );
  ctx.workers.register(
    DREAM_JOB,
    (job, signal) => dreamer.runBatch(job, signal),
    dreamer.batchFailed,
    // Two batches of one namespace at once would dream the same waiting documents twice, and
    // out of their date order.
    { onePerNamespace: true },
  );
  dreamer.resume().catch((err: unknown) => ctx.log(`resuming dreams failed: ${String(err)}`));
  return dreamer;
}
