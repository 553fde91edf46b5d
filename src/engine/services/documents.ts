import type { Metadata } from "../../api/common.js";
import type { Document, DocumentStatus } from "../../api/documents.js";
import type { EngineContext } from "../context.js";
import { QuotaExceededError } from "../errors.js";
import { isUrlContent } from "../ingest/content.js";
import type { Db } from "../store/db.js";
import type { StoredFile } from "../store/document-files.js";
import {
  chunksOfDocument,
  type DocumentFields,
  DocumentQuotaError,
  findDocument,
  documentRecord as record,
  type DocumentWrite as StoreWrite,
  storeDocumentIn,
  writeDocuments,
} from "../store/documents.js";
import { memoriesOfDocument } from "../store/memories.js";
import { findNamespace } from "../store/namespaces.js";
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
 * transaction under the organization's document token quota (store/documents.ts writeDocuments),
 * so a refused request (402, or any error) changes nothing, not even a namespace. Re-sending a
 * caller id upserts; an append adds its content to that document as a new line. Processing
 * threads are woken after the commit.
 */
export async function addDocuments(
  ctx: EngineContext,
  organizationId: string,
  writes: readonly DocumentWrite[],
): Promise<Added[]> {
  const quota = ctx.limits?.documentTokenQuota ?? null;
  // What is stored is what was sent less its secrets, as its namespace says (one not made yet: the
  // deployment's setting); an upload's or a URL's text is screened once read.
  const screens = new Map<string, boolean>();
  for (const name of new Set(writes.map((w) => w.namespace))) {
    const ns = await findNamespace(ctx.db, organizationId, name);
    screens.set(name, ns ? screensSecrets(ctx.secretScreening, ns) : ctx.secretScreening);
  }
  const screened = writes.map((w) =>
    screenText(w.document, screens.get(w.namespace)!, {
      isUrl: w.document.file !== undefined || isUrlContent(w.document.content),
    }),
  );
  let added: Added[];
  try {
    added = await writeDocuments(
      ctx.db,
      organizationId,
      writes.map((w, i) => ({
        ...documentWrite(screened[i]!.document),
        namespace: w.namespace,
        append: w.append === true,
      })),
      quota,
    );
  } catch (err) {
    if (!(err instanceof DocumentQuotaError)) throw err;
    throw new QuotaExceededError(
      "Document token limit reached",
      `the organization holds ${err.before} of its ${err.quota} document tokens and this request needs ${err.after - err.before} more; nothing was added: delete documents, or ask the operator to raise the quota`,
    );
  }
  added = added.map((a, i) => {
    const { redacted } = screened[i]!;
    return redacted.length > 0 ? { ...a, redacted } : a;
  });
  ctx.queue.wake();
  return added;
}

/**
 * Stores one document in a namespace known by id and queues its processing, in one transaction
 * (acknowledged means kept); re-sending a caller id upserts, as addDocuments does.
 */
export async function storeDocument(db: Db, ns: { id: string }, doc: NewDocument): Promise<Added> {
  return await storeDocumentIn(db, ns.id, documentWrite(doc));
}

/** A document as the store writes it: its fields as stored, defaults applied. */
export function documentWrite(doc: NewDocument): Omit<StoreWrite, "namespace"> {
  return { customId: doc.customId ?? null, fields: fieldsOf(doc), ...(doc.file ? { file: doc.file } : {}) };
}

/** The stored form of a document's fields, defaults applied. */
function fieldsOf(doc: NewDocument): DocumentFields {
  return {
    content: doc.content,
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

// Reads and deletes have no rule above the store's: its answer as it is (a delete takes with it
// the memories only that document was the source of, store/documents.ts).
export {
  chunksOfDocument,
  type DocumentRow,
  deleteDocuments,
  deleteDocumentsIn,
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
