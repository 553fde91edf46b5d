import type { Db } from "../store/db.js";
import type { DreamsWithIndex } from "../store/document-commit.js";
import { type DocumentRow, setDreamingStatus } from "../store/documents.js";
import type { JobQueue } from "./queue.js";

export interface DreamContext {
  db: Db;
  /** To queue deferred work (for example a 'dream' job that batches a namespace's documents). */
  queue: JobQueue;
  signal: AbortSignal;
}

/**
 * Memory generation ("dreaming"), called by the pipeline once documents are indexed (`status:
 * done`). It owns `dreaming_status` from there: it sets `done` when memories exist (instant), or
 * queues its own work and sets `done` later (dynamic). It may throw: the document stays indexed,
 * the error is logged and its dreaming status is left to the dreamer's retries.
 */
export interface Dreamer {
  /**
   * Optional: called before a document is marked `done`; what it answers (data: drafted memories,
   * or the namespace's batch to queue) is committed by the store with the chunks, in the
   * transaction that marks it, so `done` can mean "its memories are there" (instant dreaming) or
   * "its dreaming is queued". A dreamer that answers has dealt with the document: `dream` is not
   * called for it. Throwing fails the processing attempt (it is retried).
   */
  beforeIndexed?(doc: IndexingDocument, ctx: DreamContext): Promise<DreamsWithIndex | undefined>;
  dream(documentIds: string[], ctx: DreamContext): Promise<void>;
}

/** What the pipeline hands to beforeIndexed: the resolved text of one generation of a document. */
export interface IndexingDocument {
  id: string;
  generation: number;
  text: string;
  format: "plain" | "conversation";
  /** The document's type once resolved: an image's description, for one, gives no memories. */
  type: string;
  /** Its row as the job read it at that generation (the commit checks the generation again). */
  row: DocumentRow;
}

/** Until memory extraction plugs in: nothing to generate, so dreaming is done at once. */
export const noDreaming: Dreamer = {
  async dream(documentIds, ctx) {
    await setDreamingStatus(ctx.db, documentIds, "done");
  },
};
