import { valuesRows } from "./connection.js";
import { type Db, documentTransaction, namespaceTransaction, now } from "./db.js";
import {
  type DocumentRow,
  type IndexedDocument,
  lockedWithMemoryVersion,
  markDreamed,
  markDreamedSql,
  noteDocument,
  swapChunks,
} from "./documents.js";
import { forgottenInDocument, NOTHING_FORGOTTEN, redactDocument } from "./forgotten.js";
import { DREAM_JOB, enqueueJob, queuedJob, setJobRunAfter } from "./jobs.js";
import { documentMemoryIds, releaseDocument } from "./memories.js";
import type { MemoryDraft } from "./memory-draft.js";
import { statement } from "./statements.js";

/*
 * Committing a document's generation: its chunks and vectors, its memories (a draft of them, see
 * memory-draft.ts), or its place in its namespace's dreaming, each as one operation with the checks
 * it needs inside (the generation still current, the document still in its namespace, the
 * namespace's memories unchanged since the draft) and the forgotten sentences kept out.
 */

/** A document's memories as extraction and relation detection drafted them, to commit with the document. */
export interface DocumentMemories {
  draft: MemoryDraft;
  /**
   * The memories its facts became, were merged into, or relate to: they keep the document as a
   * source; any other memory it was a source of loses it (unless `appended`).
   */
  applied: readonly { memoryId: string; relatedTo: string | null }[];
  /** How much of its text its memories now come from (null: not a whole conversation read). */
  drawnChars: number | null;
  /** Drawn from appended turns only: the memories of the turns before stay. */
  appended: boolean;
  /** What extraction's limits left out, shown as the document's `error`. */
  note: string | null;
  /**
   * The memories the document was a source of as the draft began (documentMemoryIds, read after
   * its memory version), when the dreamer read them (memory/dreamer.ts does): the commit checks
   * that version, and what the document is a source of changes only with a write of the
   * namespace's memories (which raises it) or with its own commits. Read in the commit's
   * transaction otherwise.
   */
  sourceOf?: readonly string[] | undefined;
}

/** When a namespace's batched dreaming runs: after its last document, within a bound, at once when full. */
export interface DreamSchedule {
  /** A batch starts this long after the namespace's last indexed document... */
  debounceMs: number;
  /** ...but never later than this after the first one waiting. */
  maxWaitMs: number;
  /** A full batch starts at once. */
  maxBatch: number;
}

/**
 * What a document's commit does for its memories: commits them (instant dreaming, or none for a
 * document that makes none), or queues its namespace's batch (dynamic dreaming).
 */
export type DreamsWithIndex = { memories: DocumentMemories } | { queue: DreamSchedule };

/**
 * What a commit did: `committed`; `stale` (a newer generation, or a delete, took over: nothing
 * written, the newer job does the work); `redraft` (the namespace's memories changed since the
 * draft: nothing written, draft again).
 */
export type CommitOutcome = "committed" | "stale" | "redraft";

/**
 * Commits a processed generation of a document in one transaction: its chunks and vectors replace
 * the old ones (documents.ts swapChunks, forgotten sentences left out), it is marked `done`, and
 * `dreams` says what becomes of its memories. Without memories to commit it locks only the
 * document's row and its namespace's chunk index, so adds and other documents' indexing go on; with
 * them it takes its namespace's lock first, as every commit of the namespace's memories does.
 */
export async function commitDocumentGeneration(
  db: Db,
  ref: { id: string; namespaceId: string },
  generation: number,
  ix: IndexedDocument,
  dreams?: DreamsWithIndex,
): Promise<CommitOutcome> {
  const memories = dreams && "memories" in dreams ? dreams.memories : undefined;
  const commit = async (): Promise<CommitOutcome> => {
    const locked = await lockedWithMemoryVersion(db, ref, generation, memories !== undefined);
    if (!locked) return "stale";
    const { doc } = locked;
    if (memories && locked.memoryVersion !== memories.draft.version) return "redraft";
    await swapChunks(db, doc, ix);
    if (memories) {
      if (doc.dreaming_status !== "done") await settleMemories(db, doc, memories, locked.hasForgotten);
    } else if (dreams && "queue" in dreams && doc.dreaming_status !== "done") {
      await scheduleDreams(db, doc.namespace_id, dreams.queue, false);
    }
    return "committed";
  };
  return memories
    ? await namespaceTransaction(db, ref.namespaceId, commit)
    : await documentTransaction(db, ref.namespaceId, commit);
}

/**
 * Commits a document's memories and marks it `dreamingStatus: done`, in one transaction under its
 * namespace's lock: `stale` when its generation was replaced or deleted, or another worker dreamed
 * it already; `redraft` when the namespace's memories changed since the draft.
 */
export async function commitDocumentMemories(
  db: Db,
  ref: { id: string; namespaceId: string },
  generation: number,
  memories: DocumentMemories,
): Promise<CommitOutcome> {
  return await namespaceTransaction(db, ref.namespaceId, async () => {
    const locked = await lockedWithMemoryVersion(db, ref, generation);
    if (!locked || locked.doc.dreaming_status === "done") return "stale";
    // The namespace's memories are as the draft read them (its memory version unchanged).
    if (locked.memoryVersion !== memories.draft.version) return "redraft";
    await settleMemories(db, locked.doc, memories, locked.hasForgotten);
    return "committed";
  });
}

/**
 * Queues (or pushes back) a namespace's dream job, in a transaction that locks no more than the job
 * rows it writes (see scheduleDreams).
 */
export async function queueDreams(
  db: Db,
  namespaceId: string,
  schedule: DreamSchedule,
  immediate = false,
): Promise<void> {
  await documentTransaction(db, namespaceId, () => scheduleDreams(db, namespaceId, schedule, immediate));
}

/**
 * The namespace's dream job runs `debounceMs` after now, but no later than `maxWaitMs` after it
 * was first queued, and at once when a full batch is waiting. Not the namespace's lock: it is
 * written at the end of the transaction that indexes a document, which must not wait for the
 * namespace's memories being committed (nor take a lock after the rows it wrote: a deadlock). Two
 * documents indexed at once on PostgreSQL may each queue the namespace's batch: the second job
 * waits while the first runs (jobs.ts claimJob) and then dreams what is left, or nothing.
 */
async function scheduleDreams(
  db: Db,
  namespaceId: string,
  o: DreamSchedule,
  immediate: boolean,
): Promise<void> {
  const t = Date.now();
  // How many documents wait (counted up to a full batch), and the namespace's queued job: one read.
  const { waiting, ...job } = (await statement<{
    waiting: number;
    id: number | null;
    created_at: string | null;
  }>(
    db,
    `SELECT (SELECT count(*) FROM (SELECT 1 FROM documents WHERE namespace_id = $1 AND status = 'done'
         AND dreaming_status = 'dreaming' LIMIT $2) w) AS waiting, j.id, j.created_at
     FROM (SELECT 1) one LEFT JOIN (${queuedJob("$3", "$1")}) j ON TRUE`,
  ).get(namespaceId, o.maxBatch, DREAM_JOB))!;
  const existing = job.id === null ? undefined : { id: job.id, created_at: job.created_at! };
  const first = existing ? Date.parse(existing.created_at) : t;
  const runAt = immediate || waiting >= o.maxBatch ? t : Math.min(t + o.debounceMs, first + o.maxWaitMs);
  const id = existing?.id ?? (await enqueueJob(db, { kind: DREAM_JOB, namespaceId }));
  await setJobRunAfter(db, id, new Date(runAt).toISOString());
}

/**
 * The document's memories as drafted, and what follows from them: what an earlier version of the
 * document said and this one no longer does loses it as a source (appended turns add to what the
 * earlier ones said), the new memories' contexts lose the forgotten sentences, and the document is
 * marked dreamed. Inside the commit's transaction, under the namespace's lock.
 */
async function settleMemories(
  db: Db,
  doc: DocumentRow,
  m: DocumentMemories,
  /** Whether any sentence was forgotten from the document (else none is read). */
  hasForgotten: boolean,
): Promise<void> {
  await writeDraft(db, m.draft, { id: doc.id, chars: m.drawnChars });
  const forgotten = hasForgotten ? await forgottenInDocument(db, doc.id) : NOTHING_FORGOTTEN;
  if (!m.appended) {
    const supported = new Set([
      ...m.applied.flatMap((a) => (a.relatedTo ? [a.memoryId, a.relatedTo] : [a.memoryId])),
      ...forgotten.memoryIds,
    ]);
    await releaseDocument(
      db,
      doc.namespace_id,
      doc.id,
      (m.sourceOf ?? (await documentMemoryIds(db, doc.id))).filter((id) => !supported.has(id)),
    );
  }
  if (forgotten.any) await redactDocument(db, doc.id);
  if (m.note) await noteDocument(db, doc.id, m.note);
}

/** New memories written per statement (their rows travel as one JSON parameter). */
const DRAFT_BATCH = 500;
/** Vectors written per statement (three parameters each). */
const VECTOR_BATCH = 200;

/**
 * Writes a draft: its new memories (their final state, a batch per statement, in the order drafted:
 * rowids follow it), their sources and vectors, the changes to stored memories, then the relations;
 * and marks its document dreamed (on PostgreSQL in the statement that writes the memories).
 */
async function writeDraft(
  db: Db,
  draft: MemoryDraft,
  /** The document the draft came from, marked dreamed with it (markDreamed). */
  dreamed: { id: string; chars: number | null },
): Promise<void> {
  if (draft.empty) return await markDreamed(db, dreamed.id, dreamed.chars);
  const d = db.dialect;
  const t = now();
  const sources: [string, string, number | null, number | null][] = [];
  for (const m of draft.inserted)
    for (const [doc, span] of m.sources)
      sources.push([m.row.id, doc, span?.start ?? null, span?.end ?? null]);
  for (const [id, c] of draft.changed)
    for (const [doc, span] of c.sources) sources.push([id, doc, span?.start ?? null, span?.end ?? null]);
  const int = (k: number) => `CAST(j.value ->> ${k} AS BIGINT)`;
  const text = (k: number) => `j.value ->> ${k}`;
  const insertMemories = (rows: string) =>
    `INSERT INTO memories (id, namespace_id, memory, metadata, is_static, is_inference, is_latest, is_forgotten,
       version, parent_memory_id, root_memory_id, forget_after, forget_reason, subject, subject_kind, attribute,
       fact_value, polarity, event_date, document_id, memory_key, context, speaker, created_at, updated_at)
     SELECT ${text(1)}, ${text(2)}, ${text(3)}, ${text(4)}, ${int(5)}, ${int(6)}, ${int(7)}, 0, ${int(8)},
       ${[9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24].map(text).join(", ")}
     FROM ${d.rows(rows, "j")} ORDER BY ${int(0)}
     RETURNING rowid, id`;
  const insertSources = (rows: string, at: string) =>
    `INSERT INTO memory_sources (memory_id, document_id, start_offset, end_offset, created_at)
     SELECT j.value ->> 0, j.value ->> 1, CAST(j.value ->> 2 AS BIGINT), CAST(j.value ->> 3 AS BIGINT), ${at}
     FROM ${d.rows(rows, "j")} WHERE TRUE
     ON CONFLICT (memory_id, document_id) DO UPDATE SET start_offset = excluded.start_offset,
       end_offset = excluded.end_offset`;
  if (d.remote && draft.inserted.length <= DRAFT_BATCH) {
    // A database server: the new memories, their sources and vectors in one statement
    // (data-modifying CTEs; the keys are checked at its end), the document marked dreamed in it
    // too, a round trip instead of four.
    const vectors = draft.inserted.flatMap((m) =>
      m.vector
        ? [
            [
              m.row.id,
              m.vector.model,
              Buffer.from(
                m.vector.embedding.buffer,
                m.vector.embedding.byteOffset,
                m.vector.embedding.byteLength,
              ).toString("base64"),
            ],
          ]
        : [],
    );
    await statement(
      db,
      `WITH ins AS (${insertMemories("$1")}),
       src AS (${insertSources("$2", "$3")}),
       vec AS (INSERT INTO memory_vectors (memory_rowid, model, embedding)
         SELECT ins.rowid, v.value ->> 1, decode(v.value ->> 2, 'base64') FROM ${d.rows("$4", "v")}
         JOIN ins ON ins.id = v.value ->> 0),
       done AS (${markDreamedSql("$5", "$3", "$6")})
       SELECT count(*) AS n FROM ins`,
    ).get(
      JSON.stringify(draftRows(draft.inserted)),
      JSON.stringify(sources),
      t,
      JSON.stringify(vectors),
      dreamed.chars,
      dreamed.id,
    );
  } else {
    await markDreamed(db, dreamed.id, dreamed.chars);
    const rowids = new Map<string, number>();
    for (let at = 0; at < draft.inserted.length; at += DRAFT_BATCH) {
      const inserted = await statement<{ rowid: number; id: string }>(db, insertMemories("$1")).all(
        JSON.stringify(draftRows(draft.inserted.slice(at, at + DRAFT_BATCH))),
      );
      for (const r of inserted) rowids.set(r.id, r.rowid);
    }
    if (sources.length > 0) await statement(db, insertSources("$1", "$2")).run(JSON.stringify(sources), t);
    const vectors = draft.inserted.flatMap((m) =>
      m.vector ? [{ rowid: rowids.get(m.row.id)!, v: m.vector }] : [],
    );
    for (let at = 0; at < vectors.length; at += VECTOR_BATCH) {
      const batch = vectors.slice(at, at + VECTOR_BATCH);
      await statement(
        db,
        `INSERT INTO memory_vectors (memory_rowid, model, embedding) VALUES ${valuesRows(batch.length, 3)}`,
      ).run(
        ...batch.flatMap(({ rowid, v }) => [
          rowid,
          v.model,
          new Uint8Array(v.embedding.buffer, v.embedding.byteOffset, v.embedding.byteLength),
        ]),
      );
    }
  }
  // Stored memories: those merged take their new latest source, metadata and expiry; those
  // retired are no longer latest. Only the columns a change sets are written (an update of a
  // memory's text would index it again).
  const merged = [...draft.changed].filter(([, c]) => c.set.document_id !== undefined);
  if (merged.length > 0) {
    await statement(
      db,
      `UPDATE memories SET document_id = j.value ->> 1, metadata = j.value ->> 2, forget_after = j.value ->> 3,
         updated_at = j.value ->> 4
       FROM ${d.rows("$1", "j")} WHERE memories.id = j.value ->> 0`,
    ).run(
      JSON.stringify(
        merged.map(([id, c]) => [
          id,
          c.set.document_id,
          c.set.metadata,
          c.set.forget_after ?? null,
          c.set.updated_at,
        ]),
      ),
    );
  }
  const retired = [...draft.changed].filter(([, c]) => c.set.is_latest === 0).map(([id]) => id);
  if (retired.length > 0) {
    await statement(
      db,
      `UPDATE memories SET is_latest = 0, updated_at = $1 WHERE ${d.isIn("id", "$2", "text")}`,
    ).run(t, d.list(retired));
  }
  if (draft.relations.length > 0) {
    await statement(
      db,
      `INSERT INTO memory_relations (from_id, to_id, relation, created_at)
       SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, $2 FROM ${d.rows("$1", "j")} WHERE TRUE
       ON CONFLICT DO NOTHING`,
    ).run(JSON.stringify(draft.relations), t);
  }
}

/** New memories as the rows of a JSON parameter (their index first: the order they are inserted in). */
function draftRows(inserted: MemoryDraft["inserted"]): unknown[][] {
  return inserted.map(({ row: r, memoryKey, context }, i) => [
    i,
    r.id,
    r.namespace_id,
    r.memory,
    r.metadata,
    r.is_static,
    r.is_inference,
    r.is_latest,
    r.version,
    r.parent_memory_id,
    r.root_memory_id,
    r.forget_after,
    r.forget_reason,
    r.subject,
    r.subject_kind,
    r.attribute,
    r.fact_value,
    r.polarity,
    r.event_date,
    r.document_id,
    memoryKey,
    context,
    r.speaker,
    r.created_at,
    r.updated_at,
  ]);
}
