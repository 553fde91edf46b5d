/**
 * Request and response shapes of the legacy v3 and v4 endpoints that integrations written for the
 * hosted service still call (the batch endpoint is in documents.ts). The engine serves each as a
 * translation onto a v5 service: `containerTag` is the namespace, `customId` the document id,
 * `filters` the typed filter (legacy-filter.ts).
 */
import { z } from "zod";
import {
  DateString,
  DocumentId,
  Metadata,
  MetadataRecord,
  Namespace,
  Pagination,
  QueryText,
} from "./common.js";
import { Document, DocumentStatus, Dreaming, EntityContext, Redacted, TaskType } from "./documents.js";
import { LegacyFilter } from "./legacy-filter.js";
import {
  DELETE_DOCUMENT_IDS_MAX,
  DELETE_DOCUMENT_IDS_MIN,
  FORGET_MEMORY_IDS_MAX,
  FORGET_MEMORY_IDS_MIN,
  LEGACY_FORGET_MATCHING_MAX,
  LEGACY_FORGET_MATCHING_MAX_DEFAULT,
  LEGACY_FORGET_MATCHING_THRESHOLD_DEFAULT,
  LEGACY_MEMORIES_MAX,
  LEGACY_MEMORIES_MIN,
  LEGACY_MEMORY_MAX_LENGTH,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_PAGE_DEFAULT,
  PROFILE_BUCKETS_MAX,
  SEARCH_LIMIT_MAX,
} from "./limits.js";
import { ListOrder, ListSort } from "./lists.js";
import { Memory, MemoryRef } from "./memories.js";
import { BucketName } from "./profile.js";
import { Rerank, SearchHit, SearchMode } from "./search.js";

/** Legacy list pagination: in the body, as v3/v4 sent it (v5 moved it to the query string). */
const bodyInt = (name: string, min: number, max: number) =>
  z
    .number({ error: `${name} must be an integer` })
    .int(`${name} must be an integer`)
    .min(min, `${name} must be at least ${min}`)
    .max(max, `${name} must be at most ${max}`);

const LegacyPage = {
  page: bodyInt("page", 1, Number.MAX_SAFE_INTEGER).default(LIST_PAGE_DEFAULT),
  limit: bodyInt("limit", 1, LIST_LIMIT_MAX).default(LIST_LIMIT_DEFAULT),
  sort: ListSort.default("createdAt"),
  order: ListOrder.default("desc"),
};

const Threshold = (name: string) =>
  z
    .number({ error: `${name} must be a number` })
    .min(0, `${name} must be between 0 and 1`)
    .max(1, `${name} must be between 0 and 1`);

// ---------- POST /v3/documents ----------

export const LegacyAddDocumentBody = z.strictObject({
  // Stored as sent (not trimmed); blank content is refused as the batch endpoint refuses it.
  content: z.string().refine((c) => c.trim() !== "", "must not be empty"),
  containerTag: Namespace.optional(),
  /** Deprecated in v3: the first one is the namespace when containerTag is absent. */
  containerTags: z.array(Namespace).optional(),
  entityContext: EntityContext.optional(),
  customId: DocumentId.optional(),
  metadata: Metadata.optional(),
  taskType: TaskType.optional(),
  /** Accepted and not stored, as in the batch endpoint. */
  filepath: z.string().optional(),
  filterByMetadata: Metadata.optional(),
  documentDate: DateString.optional(),
  dreaming: Dreaming.optional(),
});
export type LegacyAddDocumentBody = z.input<typeof LegacyAddDocumentBody>;

export const LegacyAddDocumentResponse = z.looseObject({
  id: z.string(),
  status: DocumentStatus,
  redacted: Redacted.optional(),
});

// ---------- GET /v3/documents/{id} ----------

/** The v5 document, plus the top-level fields v3 read (the mapping moved them under `system`). */
export const LegacyDocument = Document.extend({
  status: DocumentStatus,
  dreamingStatus: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  containerTags: z.array(z.string()),
});
export type LegacyDocument = z.infer<typeof LegacyDocument>;

export const LegacyDocumentParams = z.strictObject({ id: DocumentId });

// ---------- GET /v3/documents/{id}/chunks ----------

export const LegacyChunk = z.looseObject({
  id: z.string(),
  position: z.number().int(),
  content: z.string(),
  type: z.string(),
  metadata: MetadataRecord.optional(),
  createdAt: z.string(),
});

export const LegacyChunksResponse = z.looseObject({
  documentId: z.string(),
  chunks: z.array(LegacyChunk),
  total: z.number().int(),
});

// ---------- POST /v3/documents/list ----------

export const LegacyListDocumentsBody = z.strictObject({
  filters: LegacyFilter.optional(),
  includeContent: z.boolean().default(false),
  /** Namespaces to list; absent: every namespace the key may use. */
  containerTags: z.array(Namespace).optional(),
  ...LegacyPage,
});
export type LegacyListDocumentsBody = z.input<typeof LegacyListDocumentsBody>;

export const LegacyListDocumentsResponse = z.looseObject({
  /** Documents (v3 called the array `memories`). */
  memories: z.array(LegacyDocument),
  pagination: Pagination,
});

// ---------- DELETE /v3/documents/{id} and /v3/documents/bulk ----------

export const LegacyDeleteDocumentResponse = z.looseObject({ id: z.string(), deleted: z.literal(true) });

export const LegacyBulkDeleteBody = z.strictObject({
  ids: z
    .array(DocumentId)
    .min(DELETE_DOCUMENT_IDS_MIN, `ids needs at least ${DELETE_DOCUMENT_IDS_MIN} id`)
    .max(DELETE_DOCUMENT_IDS_MAX, `ids takes at most ${DELETE_DOCUMENT_IDS_MAX} ids`),
});
export type LegacyBulkDeleteBody = z.input<typeof LegacyBulkDeleteBody>;

export const LegacyBulkDeleteResponse = z.looseObject({
  success: z.boolean(),
  deletedCount: z.number().int(),
  errors: z.array(z.looseObject({ id: z.string(), error: z.string() })).optional(),
});

// ---------- POST /v4/conversations ----------

export const MessageRole = z.enum(["user", "assistant", "system", "tool"], {
  error: "role must be user, assistant, system or tool",
});

/** A content part; only text parts carry words into the transcript. */
const MessagePart = z.looseObject({ type: z.string().min(1), text: z.string().optional() });

export const ConversationMessage = z.strictObject({
  role: MessageRole,
  content: z.union([z.string(), z.array(MessagePart)], {
    error: "content must be a string or an array of parts",
  }),
  name: z.string().optional(),
  tool_calls: z.array(z.looseObject({ function: z.looseObject({ name: z.string() }).optional() })).optional(),
  tool_call_id: z.string().optional(),
});
export type ConversationMessage = z.infer<typeof ConversationMessage>;

export const ConversationBody = z.strictObject({
  conversationId: DocumentId,
  messages: z.array(ConversationMessage).min(1, "messages needs at least 1 message"),
  containerTags: z.array(Namespace).optional(),
  metadata: Metadata.optional(),
});
export type ConversationBody = z.input<typeof ConversationBody>;

export const ConversationResponse = z.looseObject({
  id: z.string(),
  conversationId: z.string(),
  status: DocumentStatus,
  redacted: Redacted.optional(),
});

// ---------- POST /v4/memories ----------

const MemoryText = (name: string) =>
  z
    .string()
    .trim()
    .min(1, `${name} must not be empty`)
    .max(LEGACY_MEMORY_MAX_LENGTH, `${name} must be at most ${LEGACY_MEMORY_MAX_LENGTH} characters`);

export const NewLegacyMemory = z.strictObject({
  content: MemoryText("content"),
  isStatic: z.boolean().optional(),
  metadata: Metadata.optional(),
  forgetAfter: DateString.optional(),
  forgetReason: z.string().optional(),
  temporalContext: z.strictObject({ eventDate: DateString.optional() }).optional(),
});

export const AddMemoriesBody = z.strictObject({
  containerTag: Namespace,
  memories: z
    .array(NewLegacyMemory)
    .min(LEGACY_MEMORIES_MIN, `memories needs at least ${LEGACY_MEMORIES_MIN} memory`)
    .max(LEGACY_MEMORIES_MAX, `memories takes at most ${LEGACY_MEMORIES_MAX} memories`),
});
export type AddMemoriesBody = z.input<typeof AddMemoriesBody>;

export const WrittenMemory = z.looseObject({
  id: z.string(),
  memory: z.string(),
  isStatic: z.boolean(),
  createdAt: z.string(),
  forgetAfter: z.string().nullable(),
  forgetReason: z.string().nullable(),
  metadata: MetadataRecord.nullable(),
});

export const AddMemoriesResponse = z.looseObject({
  /** Memories written directly have no source document. */
  documentId: z.string().nullable(),
  memories: z.array(WrittenMemory),
  redacted: Redacted.optional(),
});

// ---------- PATCH and DELETE /v4/memories ----------

/** A memory named by its id, or by its exact text (the latest version holding it). */
const MemorySelector = {
  id: z.string().min(1, "id must not be empty").optional(),
  content: z.string().trim().min(1, "content must not be empty").optional(),
  containerTag: Namespace,
};
const oneSelector = (b: { id?: string | undefined; content?: string | undefined }) =>
  (b.id === undefined) !== (b.content === undefined);
const selectorRule = { message: "send id or content (exactly one)", path: ["id"] };

export const UpdateMemoryBody = z
  .strictObject({
    ...MemorySelector,
    newContent: MemoryText("newContent"),
    metadata: Metadata.optional(),
    forgetAfter: DateString.nullable().optional(),
    forgetReason: z.string().nullable().optional(),
  })
  .refine(oneSelector, selectorRule);
export type UpdateMemoryBody = z.input<typeof UpdateMemoryBody>;

export const ForgetMemoryBody = z
  .strictObject({ ...MemorySelector, reason: z.string().optional() })
  .refine(oneSelector, selectorRule);
export type ForgetMemoryBody = z.input<typeof ForgetMemoryBody>;

export const ForgetMemoryResponse = z.looseObject({ id: z.string(), forgotten: z.literal(true) });

// ---------- POST /v4/memories/forget-matching ----------

export const ForgetMatchingBody = z
  .strictObject({
    containerTag: Namespace,
    query: QueryText("query").optional(),
    ids: z
      .array(z.string().min(1))
      .min(FORGET_MEMORY_IDS_MIN, `ids needs at least ${FORGET_MEMORY_IDS_MIN} id`)
      .max(FORGET_MEMORY_IDS_MAX, `ids takes at most ${FORGET_MEMORY_IDS_MAX} ids`)
      .optional(),
    dryRun: z.boolean().default(false),
    threshold: Threshold("threshold").default(LEGACY_FORGET_MATCHING_THRESHOLD_DEFAULT),
    maxForget: bodyInt("maxForget", 1, LEGACY_FORGET_MATCHING_MAX).default(
      LEGACY_FORGET_MATCHING_MAX_DEFAULT,
    ),
    reason: z.string().optional(),
  })
  .refine((b) => (b.query === undefined) !== (b.ids === undefined), {
    message: "send query or ids (exactly one)",
    path: ["query"],
  });
export type ForgetMatchingBody = z.input<typeof ForgetMatchingBody>;

export const ForgetMatchingResponse = z.looseObject({
  dryRun: z.boolean(),
  count: z.number().int(),
  /** Names the forgetting (every memory it forgot carries it in forgetReason); null when nothing was forgotten. */
  forgetBatchId: z.string().nullable(),
  summary: z.string(),
  candidates: z.array(MemoryRef).optional(),
  forgotten: z.array(MemoryRef).optional(),
});

// ---------- POST /v4/memories/list ----------

export const LegacyListMemoriesBody = z.strictObject({
  containerTags: z.array(Namespace).optional(),
  filters: LegacyFilter.optional(),
  ...LegacyPage,
});
export type LegacyListMemoriesBody = z.input<typeof LegacyListMemoriesBody>;

export const MemoryEntry = z.looseObject({
  id: z.string(),
  memory: z.string(),
  /** Earlier versions, newest first. */
  history: z.array(Memory),
  /** Memories it extends or derives from, and those that extend or derive from it. */
  memoryRelations: z.array(z.looseObject({ id: z.string(), memory: z.string(), relation: z.string() })),
  documentIds: z.array(z.string()),
});

export const LegacyListMemoriesResponse = z.looseObject({
  memoryEntries: z.array(MemoryEntry),
  pagination: Pagination,
});

// ---------- POST /v4/search ----------

export const LegacySearchBody = z.strictObject({
  q: QueryText("q"),
  containerTag: Namespace.optional(),
  /** Legacy default `memories` (v5: hybrid). */
  searchMode: SearchMode.optional(),
  /** Legacy default 0.6 (v5: 0.3). */
  threshold: Threshold("threshold").optional(),
  limit: bodyInt("limit", 1, SEARCH_LIMIT_MAX).optional(),
  filters: LegacyFilter.optional(),
  include: z
    .strictObject({
      documents: z.boolean().optional(),
      relatedMemories: z.boolean().optional(),
      forgottenMemories: z.boolean().optional(),
    })
    .optional(),
  rerank: Rerank.optional(),
  rewriteQuery: z.boolean().optional(),
});
export type LegacySearchBody = z.input<typeof LegacySearchBody>;
export type LegacySearchRequest = z.output<typeof LegacySearchBody>;

export const LegacySearchResponse = z.looseObject({
  results: z.array(SearchHit.extend({ updatedAt: z.string().optional() })),
  total: z.number().int(),
  /** Milliseconds. */
  timing: z.number(),
});
export type LegacySearchResponse = z.infer<typeof LegacySearchResponse>;

// ---------- POST /v4/profile and /v4/profile/buckets ----------

export const LegacyProfileBody = z.strictObject({
  containerTag: Namespace,
  /** With q, the answer also carries memory search results (legacy search defaults). */
  q: QueryText("q").optional(),
  threshold: Threshold("threshold").optional(),
  filters: LegacyFilter.optional(),
  include: z.strictObject({ buckets: z.boolean().optional() }).optional(),
  buckets: z
    .array(BucketName)
    .max(PROFILE_BUCKETS_MAX, `takes at most ${PROFILE_BUCKETS_MAX} bucket names`)
    .refine((n) => new Set(n).size === n.length, { message: "bucket names must be unique" })
    .optional(),
});
export type LegacyProfileBody = z.input<typeof LegacyProfileBody>;

export const LegacyProfileResponse = z.looseObject({
  profile: z.looseObject({
    static: z.array(z.string()),
    dynamic: z.array(z.string()),
    buckets: z.record(z.string(), z.array(z.string())).optional(),
  }),
  searchResults: LegacySearchResponse.optional(),
});

export const LegacyBucketsBody = z.strictObject({ containerTag: Namespace });
export type LegacyBucketsBody = z.input<typeof LegacyBucketsBody>;

export const LegacyBucketsResponse = z.looseObject({
  buckets: z.array(
    z.looseObject({ key: z.string(), description: z.string(), owner: z.enum(["organization", "namespace"]) }),
  ),
});
