import type { DocumentType } from "../../api/index.js";
import type { EngineContext } from "../context.js";
import { chunkText } from "../ingest/chunk.js";
import { isUrlContent, resolveContent } from "../ingest/content.js";
import { FetchFailedError, FetchRefusedError } from "../ingest/fetch.js";
import { dayLabel } from "../ingest/label.js";
import { embedsChunks } from "../models/embedder.js";
import { extractFile } from "../pipeline/extraction.js";
import { type JobFailureHandler, PermanentJobError } from "../pipeline/worker.js";
import { parseJson } from "../store/db.js";
import { commitDocumentGeneration } from "../store/document-commit.js";
import { getDocumentFile } from "../store/document-files.js";
import {
  chunksToEmbed,
  type DocumentJobPayload,
  documentAtGeneration,
  setDocumentStatus,
} from "../store/documents.js";
import { forgottenSentences } from "../store/forgotten.js";
import type { JobRow } from "../store/jobs.js";
import { redactChunks } from "../text/redact.js";
import { screenConverted } from "./screening.js";

/** Texts per embedder call: large documents are embedded in slices. */
const EMBED_BATCH = 64;
/** Above these sizes chunking and indexing take long enough to be shown as states. */
const LARGE_TEXT = 100_000;
const LARGE_CHUNKS = 100;
/** Commits of a document whose instantly drafted memories the namespace's other writes overtook. */
const COMMIT_ATTEMPTS = 3;

/**
 * One document through the stages: extracting (fetch + convert), chunking, embedding (only with an
 * embedder), indexing (its generation committed with its chunks: store/document-commit.ts), then
 * dreaming. Each stage first checks that the document was not changed since the job was queued
 * (the store's generation rule); stale work is dropped, the newer job does it.
 */
export function documentJobHandler(ctx: EngineContext) {
  return async (job: JobRow, signal: AbortSignal): Promise<void> => {
    const { generation } = parseJson<DocumentJobPayload>(job.payload, { generation: 0 });
    const id = job.document_id!;
    const stage = async (status: "extracting" | "chunking" | "embedding" | "indexing") =>
      await setDocumentStatus(ctx.db, id, generation, status);

    // Three reads side by side (each on a connection of its own where the database is a server).
    const [doc, file, forgotten] = await Promise.all([
      documentAtGeneration(ctx.db, id, generation),
      getDocumentFile(ctx.db, id),
      // What the user forgot stays forgotten when the document comes again: its chunks are made
      // (and embedded) without the forgotten sentences (memory/forget.ts), so a chunk stored
      // redacted is kept as is; the commit leaves out any forgotten meanwhile.
      forgottenSentences(ctx.db, id),
    ]);
    if (!doc) return;
    // Fetching a URL or converting a file is a stage worth showing; inline text goes straight on
    // (a write transaction less per document: ingest of small notes is bound by them).
    const converts = file !== undefined || (!doc.connector_id && isUrlContent(doc.content));
    if (converts && !(await stage("extracting"))) return;
    let resolved: Awaited<ReturnType<typeof resolveContent>>;
    if (file) {
      try {
        resolved = await extractFile(file, signal);
      } catch (err) {
        // The same bytes will not read better on a retry (a damaged PDF or Word file, one past a
        // limit); stopping (an abort) hands the job back instead.
        signal.throwIfAborted();
        throw new PermanentJobError(err instanceof Error ? err.message : String(err));
      }
    } else
      try {
        // A connector already fetched and converted its item: its text, type and URL are final
        // (a page whose text is one URL line must not be fetched again).
        resolved = doc.connector_id
          ? {
              text: doc.content,
              type: doc.type as DocumentType,
              format: "plain",
              title: doc.title,
              url: doc.url,
            }
          : await resolveContent(
              doc.content,
              { allowPrivateNetwork: ctx.allowPrivateNetwork, signal },
              doc.document_date ?? doc.created_at,
            );
      } catch (err) {
        throw permanentIfHopeless(err);
      }
    signal.throwIfAborted();
    // A fetched page's or a file's text appears only now: screened for secrets as added text is
    // when it arrives (services/documents.ts).
    if (converts) resolved = await screenConverted(ctx, doc.namespace_id, resolved);

    // Short stages of small documents are not worth a write each; large ones show their stage.
    if (resolved.text.length > LARGE_TEXT && !(await stage("chunking"))) return;
    const chunks = redactChunks(
      resolved.text,
      chunkText(resolved.text, { format: resolved.format }),
      forgotten,
    ).filter((c) => c !== null);

    let vectors: { model: string; embeddings: (Float32Array | undefined)[] } | undefined;
    if (embedsChunks(ctx.embedder) && chunks.length) {
      const model = ctx.embedder.model;
      // Chunks already stored as they are keep their vectors: a grown conversation embeds its new turns.
      const todo = await chunksToEmbed(ctx.db, id, chunks, model);
      const embeddings: (Float32Array | undefined)[] = new Array(chunks.length);
      if (todo.length && !(await stage("embedding"))) return;
      for (let i = 0; i < todo.length; i += EMBED_BATCH) {
        const batch = todo.slice(i, i + EMBED_BATCH);
        const got = await ctx.embedder.embed(
          batch.map((k) => chunks[k]!.content),
          signal,
        );
        batch.forEach((k, j) => {
          embeddings[k] = got[j];
        });
      }
      vectors = { model, embeddings };
    }
    signal.throwIfAborted();

    const dctx = { db: ctx.db, queue: ctx.queue, signal };
    const ref = { id, namespaceId: doc.namespace_id };
    const indexed = {
      text: resolved.text,
      format: resolved.format,
      title: resolved.title,
      type: resolved.type,
      url: resolved.url,
      label: dayLabel(doc.document_date),
      chunks,
      vectors,
    };
    let staged = false;
    for (let attempt = 1; ; attempt++) {
      const dreams = await ctx.dreamer.beforeIndexed?.(
        { id, generation, text: resolved.text, format: resolved.format, type: resolved.type, row: doc },
        dctx,
      );
      signal.throwIfAborted();
      if (!staged && (chunks.length > LARGE_CHUNKS || vectors) && !(await stage("indexing"))) return;
      staged = true;
      const outcome = await commitDocumentGeneration(ctx.db, ref, generation, indexed, dreams);
      if (outcome === "stale") return;
      if (outcome === "committed") {
        // What beforeIndexed answered was committed with the index: the dreamer has dealt with it.
        if (dreams) {
          ctx.queue.wake();
          return;
        }
        break;
      }
      // The namespace's memories changed since they were drafted: drafted again.
      if (attempt === COMMIT_ATTEMPTS)
        throw new Error(`the memories of document ${id}'s namespace kept changing while they were drafted`);
    }

    try {
      await ctx.dreamer.dream([id], dctx);
    } catch (err) {
      // The document is indexed and searchable; memory generation retries on its own terms.
      ctx.log(`dreaming failed for ${id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
}

/** A document whose job failed for good shows `failed` with the message. */
export const documentJobFailed: JobFailureHandler = {
  mark(job: JobRow) {
    const { generation } = parseJson<DocumentJobPayload>(job.payload, { generation: 0 });
    return { document: { id: job.document_id!, generation } };
  },
};

/** A refused URL or a client error (404, 403...) will not change on retry. */
function permanentIfHopeless(err: unknown): unknown {
  if (err instanceof FetchRefusedError) return new PermanentJobError(err.message);
  if (
    err instanceof FetchFailedError &&
    err.status !== null &&
    err.status >= 400 &&
    err.status < 500 &&
    err.status !== 408 &&
    err.status !== 429
  ) {
    return new PermanentJobError(err.message);
  }
  return err;
}
