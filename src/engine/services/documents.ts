import type { Metadata } from "../../api/common.js";
import type { Document, DocumentStatus } from "../../api/documents.js";
import type { EngineContext } from "../context.js";
import { QuotaExceededError } from "../errors.js";
import { isUrlContent } from "../ingest/content.js";
import { type Db, documentTransaction, sha256, transaction } from "../store/db.js";
import { dropDocumentFile, putDocumentFile, type StoredFile } from "../store/document-files.js";
import {
  chunksOfDocument,
  claimCallerId,
  type DocumentFields,
  type DocumentRow,
  deleteDocuments,
  findDocument,
  findDocumentsIn,
  insertDocument,
  queueDocument,
  documentRecord as record,
  replaceDocument,
  touchDocument,
} from "../store/documents.js";
import { memoriesOfDocument } from "../store/memories.js";
import { ensureNamespace, organizationDocumentTokens } from "../store/namespaces.js";
import type { Redaction } from "../text/secrets.js";
import { screensSecrets, screenText } from "./screening.js";

/** A document as the engine receives it, whatever the route (v5, v3, batch, conversation, connector). */
export interface NewDocument {
  content: string;
  customId?: string | null | undefined;
  metadata?: Metadata | undefined;
  date?: string | null | undefined;
  supportingContext?: string | null | undefined;
  filterByMetadata?: Metadata | null | undefined;
  taskType?: "memory" | "superrag" | undefined;
  dreaming?: "dynamic" | "instant" | undefined;
  source?: string;
  title?: string | null;
  connectorId?: string | null;
  /**
   * An uploaded file: its bytes are stored beside the document and made into text by processing
   * (`content` is then empty until the text replaces it); `type` is the file's, known at upload.
   */
  file?: StoredFile & { type: string };
}

/** One document a caller adds to a namespace (by name: made on its first write). */
export interface DocumentWrite {
  namespace: string;
  document: NewDocument;
  /** Append `content` to the document of this caller id as a new line (a conversation turn). */
  append?: boolean;
}

export interface Added {
  id: string;
  status: DocumentStatus;
  /** An append's document's line count. */
  lines?: number;
  /** Secrets replaced by markers before storing (absent: none). */
  redacted?: Redaction[];
}

/**
 * Adds a caller's documents: each namespace is made on its first write, and the writes are one
 * transaction under the organization's document token quota, so a refused request (402, or any
 * error) changes nothing, not even a namespace. Processing threads are woken after the commit.
 */
export async function addDocuments(
  ctx: EngineContext,
  organizationId: string,
  writes: readonly DocumentWrite[],
): Promise<Added[]> {
  const added = await withinDocumentQuota(ctx, organizationId, async () => {
    const out: Added[] = [];
    for (const w of writes) {
      const ns = await ensureNamespace(ctx.db, organizationId, w.namespace);
      // What is stored is what was sent less its secrets; an upload's text is screened once read.
      const { document, redacted } = screenText(w.document, screensSecrets(ctx.secretScreening, ns), {
        isUrl: w.document.file !== undefined || isUrlContent(w.document.content),
      });
      const { customId } = document;
      const added =
        w.append && customId
          ? await appendToDocument(ctx.db, ns, { ...document, customId })
          : await storeDocument(ctx.db, ns, document);
      out.push(redacted.length > 0 ? { ...added, redacted } : added);
    }
    return out;
  });
  ctx.queue.wake();
  return added;
}

/**
 * Stores a document and queues its processing in one transaction (acknowledged means kept).
 * Re-sending a caller id upserts: the same content with the same date, metadata, context and task
 * type answers the current status and queues nothing (unless it failed); anything else is the
 * document's next generation, queued again (see sameProcessingInputs).
 */
export async function storeDocument(db: Db, ns: { id: string }, doc: NewDocument): Promise<Added> {
  return await documentTransaction(db, ns.id, async () => {
    const existing = doc.customId ? await claimCallerId(db, ns.id, doc.customId) : undefined;
    return await upsert(db, ns.id, doc, existing, false);
  });
}

/**
 * Appends `doc.content` to the document with caller id `doc.customId` on a new line, or starts
 * it; then stores it as storeDocument does. Read and write are one transaction, so turns appended
 * at once by several processes are all kept, in commit order. The caller sends one turn, not the
 * transcript; the answer has the document's line count too.
 */
async function appendToDocument(
  db: Db,
  ns: { id: string },
  doc: NewDocument & { customId: string },
): Promise<Added> {
  return await documentTransaction(db, ns.id, async () => {
    const existing = await claimCallerId(db, ns.id, doc.customId);
    const added = doc.content.trim();
    const content = existing ? `${existing.content.trimEnd()}\n${added}` : added;
    const result = await upsert(db, ns.id, { ...doc, content }, existing, existing !== undefined);
    return { ...result, lines: content.split("\n").length };
  });
}

async function upsert(
  db: Db,
  namespaceId: string,
  doc: NewDocument,
  existing: DocumentRow | undefined,
  /** The content is the stored content with text appended. */
  appended: boolean,
): Promise<Added> {
  const f = fieldsOf(doc);
  if (
    existing &&
    existing.content_hash === f.contentHash &&
    existing.status !== "failed" &&
    sameProcessingInputs(existing, f)
  ) {
    // The same document again: keep its processing (only the dreaming mode may differ).
    await touchDocument(db, existing.id, f.dreaming);
    return { id: existing.id, status: existing.status };
  }
  let id: string;
  let generation = 1;
  if (existing) {
    id = existing.id;
    generation = existing.generation + 1;
    // Memories drawn from the text so far stay valid only for appended text under the same inputs.
    const dreamedChars = appended && sameProcessingInputs(existing, f) ? existing.dreamed_chars : null;
    await replaceDocument(db, id, f, generation, dreamedChars);
  } else {
    id = await insertDocument(db, namespaceId, doc.customId ?? null, f);
  }
  if (doc.file) await putDocumentFile(db, id, doc.file);
  else if (existing) await dropDocumentFile(db, id);
  await queueDocument(db, id, namespaceId, generation, !existing);
  return { id, status: "queued" };
}

/** The stored form of a document's fields, defaults applied. */
function fieldsOf(doc: NewDocument): DocumentFields {
  return {
    content: doc.content,
    // A file is the same document again when its bytes are.
    contentHash: sha256(doc.file ? doc.file.bytes : doc.content),
    metadata: JSON.stringify(doc.metadata ?? {}),
    date: doc.date ?? null,
    supportingContext: doc.supportingContext ?? null,
    filterByMetadata: doc.filterByMetadata ? JSON.stringify(doc.filterByMetadata) : null,
    taskType: doc.taskType ?? "memory",
    dreaming: doc.dreaming ?? "dynamic",
    source: doc.source ?? null,
    title: doc.title ?? null,
    connectorId: doc.connectorId ?? null,
    type: doc.file?.type ?? null,
  };
}

/**
 * Whether re-sent content would be processed into what is already stored: the date labels chunks
 * and resolves relative dates in memories, the metadata becomes the memories' metadata (and their
 * `forgetAfter` expiry), the supporting context and filterByMetadata shape extraction, the task
 * type decides whether memories are made at all.
 */
function sameProcessingInputs(existing: DocumentRow, f: DocumentFields): boolean {
  return (
    existing.metadata === f.metadata &&
    existing.document_date === f.date &&
    existing.supporting_context === f.supportingContext &&
    existing.filter_by_metadata === f.filterByMetadata &&
    existing.task_type === f.taskType
  );
}

/**
 * Runs a write of documents in one transaction, under the organization's document token quota:
 * when the write leaves the organization over its quota, and holding more than before (replacing a
 * document with a shorter one, or deleting, is always allowed), it is rolled back and answered
 * 402. Its before and after read every namespace of the organization: under a quota the write
 * takes the schema-wide lock. Without one nothing is read across namespaces, and the write's own
 * store operations take only the locks they need (store/db.ts documentTransaction).
 */
async function withinDocumentQuota<T>(
  ctx: EngineContext,
  organizationId: string,
  write: () => Promise<T>,
): Promise<T> {
  const quota = ctx.limits?.documentTokenQuota ?? null;
  if (quota === null) return await documentTransaction(ctx.db, null, write);
  return await transaction(ctx.db, async () => {
    const before = await organizationDocumentTokens(ctx.db, organizationId);
    const out = await write();
    const after = await organizationDocumentTokens(ctx.db, organizationId);
    if (after > quota && after > before) {
      throw new QuotaExceededError(
        "Document token limit reached",
        `the organization holds ${before} of its ${quota} document tokens and this request needs ${after - before} more; nothing was added: delete documents, or ask the operator to raise the quota`,
      );
    }
    return out;
  });
}

// Reads and deletes have no rule above the store's: its answer as it is (a delete takes with it
// the memories only that document was the source of, store/documents.ts).
export {
  chunksOfDocument,
  type DocumentRow,
  deleteDocuments,
  documentRecord,
  findDocumentsIn,
  listChunks,
  listDocuments,
  type RecordRow,
} from "../store/documents.js";

/** A namespace's document by service or caller id, with the parts asked for; undefined if unknown. */
export async function readDocument(
  db: Db,
  namespaceId: string,
  id: string,
  include: ReadonlySet<string>,
): Promise<Document | undefined> {
  const doc = await findDocument(db, namespaceId, id);
  if (!doc) return undefined;
  return record(db, doc, {
    chunks: include.has("chunks") ? await chunksOfDocument(db, doc) : undefined,
    memories: include.has("memories") ? await memoriesOfDocument(db, doc.id) : undefined,
  });
}

/**
 * Deletes documents by service or caller id among several namespaces (the legacy routes name
 * none), in one transaction: a caller id used in more than one of them deletes nothing and is
 * reported, as an unknown id is.
 */
export async function deleteDocumentsIn(
  db: Db,
  namespaceIds: readonly string[],
  ids: readonly string[],
): Promise<{ count: number; errors: { id: string; error: string }[] }> {
  return await transaction(db, async () => {
    const errors: { id: string; error: string }[] = [];
    let count = 0;
    for (const id of new Set(ids)) {
      const rows = await findDocumentsIn(db, namespaceIds, id);
      if (rows.length !== 1) {
        errors.push({
          id,
          error: rows.length === 0 ? "document not found" : "customId is used in several namespaces",
        });
        continue;
      }
      count += (await deleteDocuments(db, rows[0]!.namespace_id, [rows[0]!.id])).count;
    }
    return { count, errors };
  });
}
