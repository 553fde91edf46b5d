import { z } from "zod";
import {
  DateString,
  DocumentId,
  includeList,
  Metadata,
  MetadataRecord,
  Namespace,
  Pagination,
  Timestamps,
} from "./common.js";
import { Filter } from "./filter.js";
import {
  BATCH_MAX_DOCUMENTS,
  BATCH_MIN_DOCUMENTS,
  DELETE_DOCUMENT_IDS_MAX,
  DELETE_DOCUMENT_IDS_MIN,
  ENTITY_CONTEXT_MAX_LENGTH,
} from "./limits.js";
import { Memory } from "./memories.js";

export const TaskType = z.enum(["memory", "superrag"]);
export const Dreaming = z.enum(["dynamic", "instant"]);
export const DocumentStatus = z.enum([
  "unknown",
  "queued",
  "extracting",
  "chunking",
  "embedding",
  "indexing",
  "done",
  "failed",
]);
export type DocumentStatus = z.infer<typeof DocumentStatus>;
export const DreamingStatus = z.enum(["dreaming", "done"]);
export type DreamingStatus = z.infer<typeof DreamingStatus>;
export const DocumentType = z.enum([
  "text",
  "pdf",
  // A Word (.docx) file: the hosted service's name for it.
  "docx",
  "tweet",
  "google_doc",
  "google_slide",
  "google_sheet",
  "image",
  "video",
  "audio",
  "notion_doc",
  "webpage",
  "onedrive",
  "github_markdown",
  "granola",
]);
export type DocumentType = z.infer<typeof DocumentType>;

export const EntityContext = z
  .string()
  .max(ENTITY_CONTEXT_MAX_LENGTH, `must be at most ${ENTITY_CONTEXT_MAX_LENGTH} characters`);

// ---------- POST /ns/{namespace}/document ----------

export const AddDocumentQuery = z.strictObject({
  dreaming: Dreaming.optional(),
  taskType: TaskType.optional(),
});

/**
 * v5 names are `supportingContext` and `date`; the spec's `entityContext` and `documentDate`
 * are accepted as their aliases (sending both of a pair is a 400).
 */
export const AddDocumentBody = z
  .strictObject({
    content: z.string().min(1, "must not be empty"),
    id: DocumentId.optional(),
    metadata: Metadata.optional(),
    supportingContext: EntityContext.optional(),
    entityContext: EntityContext.optional(),
    date: DateString.optional(),
    documentDate: DateString.optional(),
    filterByMetadata: Metadata.optional(),
    taskType: TaskType.optional(),
    dreaming: Dreaming.optional(),
    /**
     * memctx's extension: with `id`, `content` is added to the end of that stored document, on a
     * new line (a conversation turn), in one transaction; without a stored document it starts one.
     * The caller sends only the new turn, however long the transcript grows.
     */
    append: z.boolean().optional(),
  })
  .refine((b) => !(b.append === true && b.id === undefined), {
    message: "append needs the id of the document to append to",
    path: ["append"],
  })
  .refine((b) => !(b.supportingContext !== undefined && b.entityContext !== undefined), {
    message: "send supportingContext or its alias entityContext, not both",
    path: ["entityContext"],
  })
  .refine((b) => !(b.date !== undefined && b.documentDate !== undefined), {
    message: "send date or its alias documentDate, not both",
    path: ["documentDate"],
  });
export type AddDocumentBody = z.input<typeof AddDocumentBody>;

/**
 * memctx's: secrets found in what was sent and replaced by a marker (`[redacted: card number]`)
 * before it was stored, by kind. Absent when nothing was redacted (and from the hosted service).
 */
export const Redacted = z
  .array(z.looseObject({ kind: z.string(), count: z.number().int() }))
  .describe("Secrets replaced by a marker before storing, by kind");
export type Redacted = z.infer<typeof Redacted>;

export const AddDocumentResponse = z.looseObject({
  id: z.string(),
  status: DocumentStatus,
  /** With `append`: how many lines (conversation turns) the stored document holds now. */
  lines: z.number().int().optional(),
  redacted: Redacted.optional(),
});
export type AddDocumentResponse = z.infer<typeof AddDocumentResponse>;

// ---------- records ----------

export const Chunk = z.looseObject({
  id: z.string(),
  documentId: z.string(),
  position: z.number().int(),
  content: z.string(),
  type: z.string(),
  metadata: MetadataRecord.optional(),
  system: z.looseObject({ createdAt: z.string() }),
});
export type Chunk = z.infer<typeof Chunk>;

export const DocumentSystem = Timestamps.extend({
  status: DocumentStatus,
  dreamingStatus: DreamingStatus,
});

export const Document = z.looseObject({
  id: z.string(),
  customId: z.string().nullish(),
  title: z.string().nullish(),
  type: z.string(),
  summary: z.string().nullish(),
  content: z.string().nullish(),
  url: z.string().nullish(),
  source: z.string().nullish(),
  date: z.string().nullish(),
  metadata: MetadataRecord,
  error: z.string().nullish(),
  system: DocumentSystem,
  chunks: z.array(Chunk).optional(),
  memories: z.array(Memory).optional(),
});
export type Document = z.infer<typeof Document>;

// ---------- GET /ns/{namespace}/document/{id} ----------

export const GetDocumentQuery = z.strictObject({
  include: includeList(["chunks", "memories"] as const),
});
export type GetDocumentQuery = z.input<typeof GetDocumentQuery>;

// ---------- DELETE /ns/{namespace}/document ----------

export const DeleteDocumentsBody = z.strictObject({
  ids: z
    .array(DocumentId)
    .min(DELETE_DOCUMENT_IDS_MIN, `ids needs at least ${DELETE_DOCUMENT_IDS_MIN} id`)
    .max(DELETE_DOCUMENT_IDS_MAX, `ids takes at most ${DELETE_DOCUMENT_IDS_MAX} ids`),
});
export type DeleteDocumentsBody = z.input<typeof DeleteDocumentsBody>;

export const ItemError = z.looseObject({ id: z.string(), error: z.string() });
export type ItemError = z.infer<typeof ItemError>;

export const DeleteDocumentsResponse = z.looseObject({
  count: z.number().int(),
  errors: z.array(ItemError),
});
export type DeleteDocumentsResponse = z.infer<typeof DeleteDocumentsResponse>;

// ---------- POST /v3/documents/batch ----------

const BatchCommon = {
  containerTag: Namespace.optional(),
  containerTags: z.array(Namespace).optional(),
  metadata: Metadata.optional(),
  taskType: TaskType.optional(),
  filepath: z.string().optional(),
  filterByMetadata: Metadata.optional(),
  documentDate: DateString.optional(),
  entityContext: EntityContext.optional(),
  dreaming: Dreaming.optional(),
};

export const BatchDocument = z.strictObject({
  content: z.string(),
  customId: DocumentId.optional(),
  ...BatchCommon,
});
export type BatchDocument = z.infer<typeof BatchDocument>;

export const BatchAddBody = z.strictObject({
  documents: z.union([
    z
      .array(z.string())
      .min(BATCH_MIN_DOCUMENTS, `documents needs at least ${BATCH_MIN_DOCUMENTS} item`)
      .max(BATCH_MAX_DOCUMENTS, `documents takes at most ${BATCH_MAX_DOCUMENTS} items`),
    z
      .array(BatchDocument)
      .min(BATCH_MIN_DOCUMENTS, `documents needs at least ${BATCH_MIN_DOCUMENTS} item`)
      .max(BATCH_MAX_DOCUMENTS, `documents takes at most ${BATCH_MAX_DOCUMENTS} items`),
  ]),
  content: z.null().optional(),
  ...BatchCommon,
});
export type BatchAddBody = z.input<typeof BatchAddBody>;

export const BatchResult = z.looseObject({
  id: z.string(),
  status: z.string(),
  redacted: Redacted.optional(),
  error: z.string().optional(),
  details: z.string().optional(),
  url: z.string().optional(),
});
export type BatchResult = z.infer<typeof BatchResult>;

export const BatchAddResponse = z.looseObject({
  results: z.array(BatchResult),
  failed: z.number().int(),
  success: z.number().int(),
});
export type BatchAddResponse = z.infer<typeof BatchAddResponse>;

// ---------- POST /ns/{namespace}/list/{type} ----------

export const ListType = z.enum(["documents", "chunks", "memories"]);
export type ListType = z.infer<typeof ListType>;

export const ListBody = z.strictObject({
  filter: Filter.optional(),
  include: z.strictObject({ forgotten: z.boolean().optional() }).optional(),
});
export type ListBody = z.input<typeof ListBody>;

export const ListResponse = z.looseObject({
  documents: z.array(Document),
  chunks: z.array(Chunk),
  memories: z.array(Memory),
  pagination: Pagination,
});
export type ListResponse = z.infer<typeof ListResponse>;

export const DocumentRef = z.looseObject({ id: z.string() });
export { Filter };
