/**
 * The v5 API as one table: method, path, where each option goes, and the schemas of request
 * and response. The client builds requests from it, the engine validates against it, and the
 * OpenAPI document is generated from it.
 */
import { z } from "zod";
import { DocumentId, Namespace, PageQuery } from "./common.js";
import {
  Connector,
  ConnectorsResponse,
  CreateConnectorBody,
  CreateConnectorResponse,
  DeleteConnectorQuery,
  DeleteConnectorResponse,
  GetConnectorQuery,
  PatchConnectorBody,
  SyncResponse,
} from "./connectors.js";
import {
  AddDocumentBody,
  AddDocumentQuery,
  AddDocumentResponse,
  BatchAddBody,
  BatchAddResponse,
  DeleteDocumentsBody,
  DeleteDocumentsResponse,
  Document,
  GetDocumentQuery,
  ListBody,
  ListResponse,
  ListType,
} from "./documents.js";
import { AddDocumentFileBody, AddDocumentFileResponse, LegacyFileBody, LegacyFileResponse } from "./files.js";
import {
  AddMemoriesBody,
  AddMemoriesResponse,
  ConversationBody,
  ConversationResponse,
  ForgetMatchingBody,
  ForgetMatchingResponse,
  ForgetMemoryBody,
  ForgetMemoryResponse,
  LegacyAddDocumentBody,
  LegacyAddDocumentResponse,
  LegacyBucketsBody,
  LegacyBucketsResponse,
  LegacyBulkDeleteBody,
  LegacyBulkDeleteResponse,
  LegacyChunksResponse,
  LegacyDeleteDocumentResponse,
  LegacyDocument,
  LegacyDocumentParams,
  LegacyListDocumentsBody,
  LegacyListDocumentsResponse,
  LegacyListMemoriesBody,
  LegacyListMemoriesResponse,
  LegacyProfileBody,
  LegacyProfileResponse,
  LegacySearchBody,
  LegacySearchResponse,
  UpdateMemoryBody,
} from "./legacy.js";
import { ListQuery } from "./lists.js";
import {
  ForgetMemoriesBody,
  ForgetResponse,
  ForgetSemanticBody,
  GetMemoryQuery,
  Memory,
} from "./memories.js";
import {
  DeleteNamespaceQuery,
  NamespaceRecord,
  NamespacesResponse,
  OperationResponse,
  Organization,
  PatchNamespaceBody,
  PatchOrganizationBody,
} from "./namespaces.js";
import {
  BucketsResponse,
  DeleteBucketsBody,
  ProfileBody,
  ProfileResponse,
  PutBucketsBody,
} from "./profile.js";
import { SearchBody, SearchQuery, SearchResponse } from "./search.js";

export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
export type Tag =
  | "documents"
  | "search"
  | "memories"
  | "profile"
  | "namespaces"
  | "connectors"
  | "organization"
  | "legacy";

export interface Endpoint<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** With `{name}` placeholders, as in the spec. */
  path: string;
  tag: Tag;
  summary: string;
  params: P;
  query?: Q;
  body?: B;
  response: R;
  /** How the body travels: JSON (default), or multipart/form-data for file uploads. */
  bodyType?: "json" | "multipart";
  /** The success status, 200 unless the endpoint answers 201 or 202. */
  status?: 200 | 201 | 202;
  /** Safe to retry after a failure that may have reached the server. */
  idempotent: boolean;
  /**
   * A POST that only reads (a search, a list, a profile): a read-only key may call it. Every
   * other POST, and every PUT, PATCH and DELETE, writes (see `writes`).
   */
  readsOnly?: true;
}

/** Whether an endpoint changes what is stored: a read-only key may not call it (403). */
export const writes = (e: Endpoint): boolean => e.method !== "GET" && e.readsOnly !== true;

const NsParams = z.strictObject({ namespace: Namespace });
const NsIdParams = z.strictObject({ namespace: Namespace, id: DocumentId });
const NoParams = z.strictObject({});

const define = <P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(
  e: Endpoint<P, Q, B, R>,
) => e;

export const endpoints = {
  // documents
  addDocument: define({
    method: "POST",
    path: "/ns/{namespace}/document",
    tag: "documents",
    summary: "Add or upsert a document; processing is asynchronous",
    params: NsParams,
    query: AddDocumentQuery,
    body: AddDocumentBody,
    response: AddDocumentResponse,
    // An add with a caller id is an upsert: the client decides per request (see client).
    idempotent: false,
  }),
  addDocumentFile: define({
    method: "POST",
    path: "/ns/{namespace}/document/file",
    tag: "documents",
    summary:
      "Upload a file (multipart, at most 50 MB): text, Markdown, HTML, PDF, Word; images, audio, video kept",
    params: NsParams,
    query: AddDocumentQuery,
    body: AddDocumentFileBody,
    bodyType: "multipart",
    response: AddDocumentFileResponse,
    // As addDocument: with an `id` it is an upsert (see client).
    idempotent: false,
  }),
  getDocument: define({
    method: "GET",
    path: "/ns/{namespace}/document/{id}",
    tag: "documents",
    summary: "Read a document, optionally with its chunks and memories",
    params: NsIdParams,
    query: GetDocumentQuery,
    response: Document,
    idempotent: true,
  }),
  deleteDocuments: define({
    method: "DELETE",
    path: "/ns/{namespace}/document",
    tag: "documents",
    summary: "Delete 1 to 100 documents by id; per-id errors in a 200",
    params: NsParams,
    body: DeleteDocumentsBody,
    response: DeleteDocumentsResponse,
    idempotent: true,
  }),
  list: define({
    method: "POST",
    path: "/ns/{namespace}/list/{type}",
    tag: "documents",
    summary: "List documents, chunks or memories of a namespace",
    params: z.strictObject({ namespace: Namespace, type: ListType }),
    query: ListQuery,
    body: ListBody,
    response: ListResponse,
    idempotent: true,
    readsOnly: true,
  }),
  batchAdd: define({
    method: "POST",
    path: "/v3/documents/batch",
    tag: "documents",
    summary: "Add 1 to 600 documents; per-item results in a 200",
    params: NoParams,
    body: BatchAddBody,
    response: BatchAddResponse,
    idempotent: false,
  }),
  legacyAddFile: define({
    method: "POST",
    path: "/v3/documents/file",
    tag: "documents",
    summary: "Legacy file upload (multipart): containerTag, customId, metadata as a JSON string",
    params: NoParams,
    body: LegacyFileBody,
    bodyType: "multipart",
    response: LegacyFileResponse,
    idempotent: false,
  }),
  // search
  search: define({
    method: "POST",
    path: "/ns/{namespace}/search",
    tag: "search",
    summary: "Search memories, chunks or both",
    params: NsParams,
    query: SearchQuery,
    body: SearchBody,
    response: SearchResponse,
    idempotent: true,
    readsOnly: true,
  }),
  // memories
  getMemory: define({
    method: "GET",
    path: "/ns/{namespace}/memories/{id}",
    tag: "memories",
    summary: "Read one memory, optionally with related memories and its document",
    params: z.strictObject({ namespace: Namespace, id: z.string().min(1) }),
    query: GetMemoryQuery,
    response: Memory,
    idempotent: true,
  }),
  forgetMemories: define({
    method: "DELETE",
    path: "/ns/{namespace}/memories",
    tag: "memories",
    summary: "Forget memories by exact id",
    params: NsParams,
    body: ForgetMemoriesBody,
    response: ForgetResponse,
    idempotent: true,
  }),
  forgetSemantic: define({
    method: "DELETE",
    path: "/ns/{namespace}/memories/semantic",
    tag: "memories",
    summary: "Forget memories by meaning; dryRun returns the matches and changes nothing",
    params: NsParams,
    body: ForgetSemanticBody,
    response: ForgetResponse,
    idempotent: true,
  }),
  // profile
  getProfile: define({
    method: "POST",
    path: "/ns/{namespace}/profile",
    tag: "profile",
    summary: "The namespace's profile: static facts, dynamic facts and buckets",
    params: NsParams,
    body: ProfileBody,
    response: ProfileResponse,
    idempotent: true,
    readsOnly: true,
  }),
  getBuckets: define({
    method: "GET",
    path: "/ns/{namespace}/profile/buckets",
    tag: "profile",
    summary: "The effective bucket definitions, organization-owned ones included",
    params: NsParams,
    response: BucketsResponse,
    idempotent: true,
  }),
  putBuckets: define({
    method: "PUT",
    path: "/ns/{namespace}/profile/buckets",
    tag: "profile",
    summary: "Add or update 1 to 50 namespace buckets",
    params: NsParams,
    body: PutBucketsBody,
    response: BucketsResponse,
    idempotent: true,
  }),
  deleteBuckets: define({
    method: "DELETE",
    path: "/ns/{namespace}/profile/buckets",
    tag: "profile",
    summary: "Remove namespace buckets by name",
    params: NsParams,
    body: DeleteBucketsBody,
    response: BucketsResponse,
    idempotent: true,
  }),
  // namespaces
  listNamespaces: define({
    method: "GET",
    path: "/namespaces",
    tag: "namespaces",
    summary: "Namespaces of the organization with their document and memory counts (alias GET /ns)",
    params: NoParams,
    query: PageQuery,
    response: NamespacesResponse,
    idempotent: true,
  }),
  getNamespace: define({
    method: "GET",
    path: "/ns/{namespace}",
    tag: "namespaces",
    summary: "The context guiding one namespace",
    params: NsParams,
    response: NamespaceRecord,
    idempotent: true,
  }),
  patchNamespace: define({
    method: "PATCH",
    path: "/ns/{namespace}",
    tag: "namespaces",
    summary: "Set (or clear with null) the namespace's supportingContext",
    params: NsParams,
    body: PatchNamespaceBody,
    response: NamespaceRecord,
    idempotent: true,
  }),
  deleteNamespace: define({
    method: "DELETE",
    path: "/ns/{namespace}",
    tag: "namespaces",
    summary: "Delete a namespace and its content, or move the content to ?moveTo= first",
    params: NsParams,
    query: DeleteNamespaceQuery,
    response: OperationResponse,
    status: 202,
    idempotent: true,
  }),
  // connectors
  createConnector: define({
    method: "POST",
    path: "/ns/{namespace}/connectors",
    tag: "connectors",
    summary: "Connect a source; OAuth providers answer with an authorization link",
    params: NsParams,
    body: CreateConnectorBody,
    response: CreateConnectorResponse,
    idempotent: false,
  }),
  listConnectors: define({
    method: "GET",
    path: "/ns/{namespace}/connectors",
    tag: "connectors",
    summary: "Connectors of the namespace",
    params: NsParams,
    response: ConnectorsResponse,
    idempotent: true,
  }),
  getConnector: define({
    method: "GET",
    path: "/ns/{namespace}/connectors/{id}",
    tag: "connectors",
    summary: "Read one connector, optionally with its recent runs or picker link",
    params: z.strictObject({ namespace: Namespace, id: z.string().min(1) }),
    query: GetConnectorQuery,
    response: Connector,
    idempotent: true,
  }),
  patchConnector: define({
    method: "PATCH",
    path: "/ns/{namespace}/connectors/{id}",
    tag: "connectors",
    summary: "Change what a connector syncs",
    params: z.strictObject({ namespace: Namespace, id: z.string().min(1) }),
    body: PatchConnectorBody,
    response: Connector,
    idempotent: true,
  }),
  syncConnector: define({
    method: "POST",
    path: "/ns/{namespace}/connectors/{id}/sync",
    tag: "connectors",
    summary: "Start a sync now; 409 while one is running",
    params: z.strictObject({ namespace: Namespace, id: z.string().min(1) }),
    response: SyncResponse,
    status: 202,
    idempotent: false,
  }),
  deleteConnector: define({
    method: "DELETE",
    path: "/ns/{namespace}/connectors/{id}",
    tag: "connectors",
    summary: "Disconnect; ?deleteDocuments=true also deletes what it imported",
    params: z.strictObject({ namespace: Namespace, id: z.string().min(1) }),
    query: DeleteConnectorQuery,
    response: DeleteConnectorResponse,
    idempotent: true,
  }),
  listAllConnectors: define({
    method: "GET",
    path: "/connectors",
    tag: "connectors",
    summary: "Every connector of the organization, across namespaces",
    params: NoParams,
    response: ConnectorsResponse,
    idempotent: true,
  }),
  // organization
  getOrganization: define({
    method: "GET",
    path: "/organization",
    tag: "organization",
    summary: "Shared context and namespace count",
    params: NoParams,
    response: Organization,
    idempotent: true,
  }),
  patchOrganization: define({
    method: "PATCH",
    path: "/organization",
    tag: "organization",
    summary: "Set the shared organizational context",
    params: NoParams,
    body: PatchOrganizationBody,
    response: Organization,
    idempotent: true,
  }),
  // legacy v3 and v4: translations onto the v5 services (engine/routes/legacy/)
  legacyAddDocument: define({
    method: "POST",
    path: "/v3/documents",
    tag: "legacy",
    summary: "v3: add or upsert (by customId) one document in containerTag",
    params: NoParams,
    body: LegacyAddDocumentBody,
    response: LegacyAddDocumentResponse,
    idempotent: false,
  }),
  legacyListDocuments: define({
    method: "POST",
    path: "/v3/documents/list",
    tag: "legacy",
    summary: "v3: list documents of some or every namespace; pagination in the body",
    params: NoParams,
    body: LegacyListDocumentsBody,
    response: LegacyListDocumentsResponse,
    idempotent: true,
    readsOnly: true,
  }),
  legacyBulkDeleteDocuments: define({
    method: "DELETE",
    path: "/v3/documents/bulk",
    tag: "legacy",
    summary: "v3: delete 1 to 100 documents by id or customId; per-id errors in a 200",
    params: NoParams,
    body: LegacyBulkDeleteBody,
    response: LegacyBulkDeleteResponse,
    idempotent: true,
  }),
  legacyGetDocument: define({
    method: "GET",
    path: "/v3/documents/{id}",
    tag: "legacy",
    summary: "v3: read a document by id or customId",
    params: LegacyDocumentParams,
    response: LegacyDocument,
    idempotent: true,
  }),
  legacyDocumentChunks: define({
    method: "GET",
    path: "/v3/documents/{id}/chunks",
    tag: "legacy",
    summary: "v3: the chunks of a document, in order",
    params: LegacyDocumentParams,
    response: LegacyChunksResponse,
    idempotent: true,
  }),
  legacyDeleteDocument: define({
    method: "DELETE",
    path: "/v3/documents/{id}",
    tag: "legacy",
    summary: "v3: delete one document by id or customId",
    params: LegacyDocumentParams,
    response: LegacyDeleteDocumentResponse,
    idempotent: true,
  }),
  legacyAddConversation: define({
    method: "POST",
    path: "/v4/conversations",
    tag: "legacy",
    summary: "v4: store a conversation; the same conversationId keeps one document",
    params: NoParams,
    body: ConversationBody,
    response: ConversationResponse,
    idempotent: true,
  }),
  legacyAddMemories: define({
    method: "POST",
    path: "/v4/memories",
    tag: "legacy",
    summary: "v4: write 1 to 100 memories directly, without a document",
    params: NoParams,
    body: AddMemoriesBody,
    response: AddMemoriesResponse,
    status: 201,
    idempotent: false,
  }),
  legacyUpdateMemory: define({
    method: "PATCH",
    path: "/v4/memories",
    tag: "legacy",
    summary: "v4: update a memory; the answer is its new version",
    params: NoParams,
    body: UpdateMemoryBody,
    response: Memory,
    idempotent: false,
  }),
  legacyForgetMemory: define({
    method: "DELETE",
    path: "/v4/memories",
    tag: "legacy",
    summary: "v4: forget one memory by id or exact text; 409 when already forgotten",
    params: NoParams,
    body: ForgetMemoryBody,
    response: ForgetMemoryResponse,
    idempotent: false,
  }),
  legacyForgetMatching: define({
    method: "POST",
    path: "/v4/memories/forget-matching",
    tag: "legacy",
    summary: "v4: forget memories by meaning or ids; dryRun lists the candidates and changes nothing",
    params: NoParams,
    body: ForgetMatchingBody,
    response: ForgetMatchingResponse,
    idempotent: false,
  }),
  legacyListMemories: define({
    method: "POST",
    path: "/v4/memories/list",
    tag: "legacy",
    summary: "v4: list memories with their history, relations and source documents",
    params: NoParams,
    body: LegacyListMemoriesBody,
    response: LegacyListMemoriesResponse,
    idempotent: true,
    readsOnly: true,
  }),
  legacySearch: define({
    method: "POST",
    path: "/v4/search",
    tag: "legacy",
    summary: "v4: search with the legacy defaults (searchMode memories, threshold 0.6)",
    params: NoParams,
    body: LegacySearchBody,
    response: LegacySearchResponse,
    idempotent: true,
    readsOnly: true,
  }),
  legacyProfile: define({
    method: "POST",
    path: "/v4/profile",
    tag: "legacy",
    summary: "v4: the profile as texts, with memory search results when q is given",
    params: NoParams,
    body: LegacyProfileBody,
    response: LegacyProfileResponse,
    idempotent: true,
    readsOnly: true,
  }),
  legacyBuckets: define({
    method: "POST",
    path: "/v4/profile/buckets",
    tag: "legacy",
    summary: "v4: the effective bucket definitions as key/description objects",
    params: NoParams,
    body: LegacyBucketsBody,
    response: LegacyBucketsResponse,
    idempotent: true,
    readsOnly: true,
  }),
} as const;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;

/** `/ns/{namespace}/document/{id}` with params filled in, each segment URI-encoded. */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = params[k];
    if (v === undefined) throw new Error(`missing path parameter ${k}`);
    return encodeURIComponent(v);
  });
}

/** GET /ns answers exactly as GET /namespaces. */
export const NAMESPACES_ALIAS_PATH = "/ns";
