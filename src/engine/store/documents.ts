import type { Metadata } from "../../api/common.js";
import type { Chunk, Document, DocumentStatus } from "../../api/documents.js";
import type { Filter } from "../../api/filter.js";
import type { Memory } from "../../api/memories.js";
import { redactChunks, redactTitle } from "../text/redact.js";
import { Params } from "./connection.js";
import { upsertConnectorItem } from "./connector-items.js";
import {
  type Db,
  documentTransaction,
  lockName,
  namespaceTransaction,
  newId,
  now,
  parseJson,
  sha256,
  transaction,
} from "./db.js";
import { dropDocumentFile, putDocumentFile, type StoredFile } from "./document-files.js";
import { compileFilter, filterFormFor } from "./filter.js";
import { forgottenSentences } from "./forgotten.js";
import { enqueueDocumentJob, enqueueJob } from "./jobs.js";
import { ensureNamespace, organizationDocumentTokens } from "./namespaces.js";
import { inNamespaces, orderBy, type Page, type PageRequest } from "./pages.js";
import { lockSearchSpace } from "./search-index.js";
import { statement } from "./statements.js";

export interface DocumentRow {
  rowid: number;
  id: string;
  namespace_id: string;
  custom_id: string | null;
  content: string;
  content_hash: string;
  text: string | null;
  format: "plain" | "conversation";
  title: string | null;
  type: string;
  url: string | null;
  source: string | null;
  summary: string | null;
  metadata: string;
  document_date: string | null;
  supporting_context: string | null;
  filter_by_metadata: string | null;
  task_type: "memory" | "superrag";
  dreaming: "dynamic" | "instant";
  status: DocumentStatus;
  dreaming_status: "dreaming" | "done";
  error: string | null;
  generation: number;
  connector_id: string | null;
  /**
   * A conversation's memories were drawn from its text up to here, under the document's current
   * inputs: appended turns after it are extracted alone. NULL: draw from the whole text.
   */
  dreamed_chars: number | null;
  created_at: string;
  updated_at: string;
}

/** A document row as the API's records are made from it: without `text`, which no record shows. */
export type RecordRow = Omit<DocumentRow, "text">;

/**
 * The columns of a RecordRow, over alias `d`: every one but `text`, the resolved text, as long as
 * the content (or, for an uploaded file, a copy of it): a read of a 40 MB document read both.
 */
const RECORD_COLUMNS = [
  "rowid",
  "id",
  "namespace_id",
  "custom_id",
  "content",
  "content_hash",
  "format",
  "title",
  "type",
  "url",
  "source",
  "summary",
  "metadata",
  "document_date",
  "supporting_context",
  "filter_by_metadata",
  "task_type",
  "dreaming",
  "status",
  "dreaming_status",
  "error",
  "generation",
  "connector_id",
  "dreamed_chars",
  "created_at",
  "updated_at",
]
  .map((c) => `d.${c}`)
  .join(", ");

export interface ChunkRow {
  rowid: number;
  id: string;
  document_id: string;
  namespace_id: string;
  position: number;
  content: string;
  type: string;
  start_offset: number;
  end_offset: number;
  /** `[8 May 2023]` for a dated document's chunks (see ingest/label.ts). */
  label: string | null;
  /** A conversation turn's role, lowercased. */
  speaker: string | null;
  /** The turns around it, indexed for search at a lower weight. */
  context: string;
  created_at: string;
  /** label + " " + content: what search indexes and returns. */
  text: string;
}

/** Payload of a 'document' job: the generation it processes (an upsert makes older ones stale). */
export interface DocumentJobPayload {
  generation: number;
}

/**
 * A document's fields as an add stores them: JSON columns as their text, defaults applied. Whether
 * re-sent content is processed again is decided from them (see writeDocuments).
 */
export interface DocumentFields {
  content: string;
  metadata: string;
  date: string | null;
  supportingContext: string | null;
  filterByMetadata: string | null;
  taskType: "memory" | "superrag";
  dreaming: "dynamic" | "instant";
  /** null: the stored one stays (an upsert), or the default for a new document. */
  source: string | null;
  title: string | null;
  connectorId: string | null;
  /** An uploaded file's type; null: text (kept as it was by an upsert). */
  type: string | null;
}

/** One document written into a namespace (by name: made on its first write). */
export interface DocumentWrite {
  namespace: string;
  customId: string | null;
  fields: DocumentFields;
  /** An uploaded file, stored beside the document (its content is then empty until processed). */
  file?: StoredFile | undefined;
  /** Appends `fields.content` as a new line to the document with this caller id (a conversation turn). */
  append?: boolean;
}

/** What a write answers for each document. */
export interface WrittenDocument {
  id: string;
  status: DocumentStatus;
  /** An append's document's line count. */
  lines?: number;
}

/**
 * A write that would leave the organization over its document token quota, holding more than
 * before: nothing of it was written.
 */
export class DocumentQuotaError extends Error {
  constructor(
    readonly before: number,
    readonly after: number,
    readonly quota: number,
  ) {
    super(`document token quota ${quota}: ${before} held, ${after} after the write`);
    this.name = "DocumentQuotaError";
  }
}

/**
 * Writes documents, each namespace made on its first write, all in one transaction: acknowledged
 * means kept, and a refused write (any error) changes nothing, not even a namespace. Each document
 * is stored and its processing queued (storeDocument). With a `quota` of document tokens, a write
 * that leaves the organization over it while holding more than before (replacing a document with
 * a shorter one always passes) throws DocumentQuotaError: its before and after read every
 * namespace of the organization, so it takes the schema-wide lock; without one, only the rows the
 * write touches are locked (store/db.ts documentTransaction), so adds into one namespace go on
 * side by side.
 */
export async function writeDocuments(
  db: Db,
  organizationId: string,
  writes: readonly DocumentWrite[],
  quota: number | null,
): Promise<WrittenDocument[]> {
  const write = async () => {
    const out: WrittenDocument[] = [];
    for (const w of writes) {
      const ns = await ensureNamespace(db, organizationId, w.namespace);
      out.push(await documentTransaction(db, ns.id, () => storeDocument(db, ns.id, w)));
    }
    return out;
  };
  if (quota === null) return await documentTransaction(db, null, write);
  return await transaction(db, async () => {
    const before = await organizationDocumentTokens(db, organizationId);
    const out = await write();
    const after = await organizationDocumentTokens(db, organizationId);
    if (after > quota && after > before) throw new DocumentQuotaError(before, after, quota);
    return out;
  });
}

/** Stores one document into a namespace known by id and queues its processing (see storeDocument), in one transaction. */
export async function storeDocumentIn(
  db: Db,
  namespaceId: string,
  w: Omit<DocumentWrite, "namespace">,
): Promise<WrittenDocument> {
  return await documentTransaction(db, namespaceId, () =>
    storeDocument(db, namespaceId, { ...w, namespace: "" }),
  );
}

/**
 * Stores a document and queues its processing (inside the caller's transaction). Re-sending a
 * caller id upserts: the same content with the same date, metadata, context and task type
 * answers the current status and queues nothing (unless it failed); anything else is the
 * document's next generation, queued again (see sameProcessingInputs). An append reads and writes
 * under its caller id's lock, so turns appended at once by several processes are all kept, in
 * commit order.
 */
async function storeDocument(db: Db, namespaceId: string, w: DocumentWrite): Promise<WrittenDocument> {
  const existing = w.customId ? await claimCallerId(db, namespaceId, w.customId) : undefined;
  if (!(w.append && w.customId)) return await upsert(db, namespaceId, w, existing, false);
  const added = w.fields.content.trim();
  const content = existing ? `${existing.content.trimEnd()}\n${added}` : added;
  const appended = { ...w, fields: { ...w.fields, content } };
  const result = await upsert(db, namespaceId, appended, existing, existing !== undefined);
  return { ...result, lines: content.split("\n").length };
}

async function upsert(
  db: Db,
  namespaceId: string,
  w: DocumentWrite,
  existing: DocumentRow | undefined,
  /** The content is the stored content with text appended. */
  appended: boolean,
): Promise<WrittenDocument> {
  const f = w.fields;
  // A file is the same document again when its bytes are.
  const contentHash = sha256(w.file ? w.file.bytes : f.content);
  if (
    existing &&
    existing.content_hash === contentHash &&
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
    await replaceDocument(db, id, f, contentHash, generation, dreamedChars);
  } else {
    id = await insertDocument(db, namespaceId, w.customId, f, contentHash);
  }
  if (w.file) await putDocumentFile(db, id, w.file);
  else if (existing) await dropDocumentFile(db, id);
  await queueDocument(db, id, namespaceId, generation, !existing);
  return { id, status: "queued" };
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
 * The namespace's document with this caller id, if any; inside a transaction, writers of the same
 * caller id take turns from here until it ends (its row may not exist yet).
 */
async function claimCallerId(
  db: Db,
  namespaceId: string,
  customId: string,
): Promise<DocumentRow | undefined> {
  await lockName(db, `document:${namespaceId}:${customId}`);
  return await statement<DocumentRow>(
    db,
    "SELECT * FROM documents WHERE namespace_id = $1 AND custom_id = $2",
  ).get(namespaceId, customId);
}

/** The same document sent again: only its dreaming mode and update time change. */
async function touchDocument(db: Db, id: string, dreaming: DocumentFields["dreaming"]): Promise<void> {
  await statement(db, "UPDATE documents SET dreaming = $1, updated_at = $2 WHERE id = $3").run(
    dreaming,
    now(),
    id,
  );
}

/** The fields' values in the order of FIELD_COLUMNS: the first twelve parameters of both writes below. */
const fieldValues = (f: DocumentFields, contentHash: string) => [
  f.content,
  contentHash,
  f.metadata,
  f.date,
  f.supportingContext,
  f.filterByMetadata,
  f.taskType,
  f.dreaming,
  f.source,
  f.title,
  f.connectorId,
  f.type,
];
const FIELD_COLUMNS = `content, content_hash, metadata, document_date, supporting_context, filter_by_metadata,
  task_type, dreaming, source, title, connector_id, type`;

/**
 * Stores new fields in a document as its next generation, queued for processing;
 * `dreamedChars` is how much of its text the memories drawn so far stay valid for (null: none).
 */
async function replaceDocument(
  db: Db,
  id: string,
  f: DocumentFields,
  contentHash: string,
  generation: number,
  dreamedChars: number | null,
): Promise<void> {
  await statement(
    db,
    `UPDATE documents SET content = $1, content_hash = $2, metadata = $3, document_date = $4, supporting_context = $5,
       filter_by_metadata = $6, task_type = $7, dreaming = $8, source = COALESCE($9, source),
       title = COALESCE($10, title), connector_id = COALESCE($11, connector_id), type = COALESCE($12, type),
       status = 'queued', dreaming_status = 'dreaming', error = NULL, generation = $13, dreamed_chars = $14,
       updated_at = $15
     WHERE id = $16`,
  ).run(...fieldValues(f, contentHash), generation, dreamedChars, now(), id);
}

/** Inserts a new document (generation 1, queued) and answers its service id. */
async function insertDocument(
  db: Db,
  namespaceId: string,
  customId: string | null,
  f: DocumentFields,
  contentHash: string,
): Promise<string> {
  const id = newId("doc");
  const t = now();
  await statement(
    db,
    `INSERT INTO documents (${FIELD_COLUMNS}, id, namespace_id, custom_id, status, dreaming_status, generation,
       created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9, 'api'), $10, $11, COALESCE($12, 'text'), $13, $14, $15,
       'queued', 'dreaming', 1, $16, $17)`,
  ).run(...fieldValues(f, contentHash), id, namespaceId, customId, t, t);
  return id;
}

/**
 * Queues the processing of a document's generation. A new document has no job to take the payload
 * over: one statement, not three.
 */
async function queueDocument(
  db: Db,
  documentId: string,
  namespaceId: string,
  generation: number,
  isNew: boolean,
): Promise<void> {
  const payload = { generation } satisfies DocumentJobPayload;
  if (isNew) await enqueueJob(db, { kind: "document", documentId, namespaceId, payload });
  else await enqueueDocumentJob(db, documentId, namespaceId, payload);
}

/**
 * A connector's document: stored as an add stores it (storeDocument, under its namespace's
 * document locks), with the type and URL the provider gave, and recorded as the connector's item
 * `externalId` at `version`, in one transaction. Answers the document's id.
 */
export async function storeConnectorDocument(
  db: Db,
  namespaceId: string,
  w: Omit<DocumentWrite, "namespace" | "append">,
  item: { connectorId: string; externalId: string; version: string; type: string; url: string | null },
): Promise<string> {
  return await documentTransaction(db, namespaceId, async () => {
    const { id } = await storeDocument(db, namespaceId, { ...w, namespace: "" });
    // The provider knows the type and URL; processing keeps them for connector documents.
    await statement(db, "UPDATE documents SET type = $1, url = $2 WHERE id = $3").run(
      item.type,
      item.url,
      id,
    );
    await upsertConnectorItem(db, item.connectorId, item.externalId, id, item.version);
    return id;
  });
}

/**
 * The most recently updated of a memory's source documents: its latest source (`documentId`) or
 * any other document it came from.
 */
export async function latestSourceDocument(
  db: Db,
  namespaceId: string,
  memoryId: string,
  documentId: string | null,
): Promise<Document | undefined> {
  const row = await statement<RecordRow>(
    db,
    `SELECT ${RECORD_COLUMNS} FROM documents d WHERE d.namespace_id = $1 AND (d.id = $2
       OR d.id IN (SELECT document_id FROM memory_sources WHERE memory_id = $3))
     ORDER BY d.updated_at DESC, d.rowid DESC LIMIT 1`,
  ).get(namespaceId, documentId, memoryId);
  return row ? await documentRecord(db, row) : undefined;
}

/**
 * The documents of any of these namespaces with this service id or caller id: a service id is
 * unique; a caller id may be used in several namespaces (the legacy routes, which name no
 * namespace, report that).
 */
export async function findDocumentsIn(
  db: Db,
  namespaceIds: readonly string[],
  idOrCustomId: string,
): Promise<RecordRow[]> {
  const inAny = db.dialect.isIn("namespace_id", "$2", "text");
  const byId = await statement<DocumentRow>(
    db,
    `SELECT ${RECORD_COLUMNS} FROM documents d WHERE id = $1 AND ${inAny}`,
  ).get(idOrCustomId, db.dialect.list(namespaceIds));
  if (byId) return [byId];
  return await statement<DocumentRow>(
    db,
    `SELECT ${RECORD_COLUMNS} FROM documents d WHERE custom_id = $1 AND ${inAny} ORDER BY rowid`,
  ).all(idOrCustomId, db.dialect.list(namespaceIds));
}

/** A document of the namespace by service id or caller id (a service id wins a tie). */
export async function findDocument(
  db: Db,
  namespaceId: string,
  idOrCustomId: string,
): Promise<RecordRow | undefined> {
  return await statement<RecordRow>(
    db,
    `SELECT ${RECORD_COLUMNS} FROM documents d WHERE namespace_id = $1 AND (id = $2 OR custom_id = $3)
       ORDER BY id = $4 DESC LIMIT 1`,
  ).get(namespaceId, idOrCustomId, idOrCustomId, idOrCustomId);
}

export async function getDocumentRow(db: Db, id: string): Promise<DocumentRow | undefined> {
  return await statement<DocumentRow>(db, "SELECT * FROM documents WHERE id = $1").get(id);
}

/**
 * A document as the API shows it. `forgotten`: the sentences forgotten from it, which a title made
 * from its first line must not say (text/redact.ts redactTitle); documentRecords reads them.
 */
export function toDocument(
  d: RecordRow,
  extra?: { chunks?: Chunk[]; memories?: Memory[]; forgotten?: readonly string[] },
): Document {
  const forgotten = extra?.forgotten ?? [];
  return {
    id: d.id,
    customId: d.custom_id,
    title: d.title && forgotten.length > 0 ? redactTitle(d.title, forgotten) : d.title,
    type: d.type,
    summary: d.summary,
    content: d.content,
    url: d.url,
    source: d.source,
    date: d.document_date,
    metadata: parseJson<Metadata>(d.metadata, {}),
    ...(d.error ? { error: d.error } : {}),
    system: {
      status: d.status,
      dreamingStatus: d.dreaming_status,
      createdAt: d.created_at,
      updatedAt: d.updated_at,
    },
    ...(extra?.chunks ? { chunks: extra.chunks } : {}),
    ...(extra?.memories ? { memories: extra.memories } : {}),
  };
}

/**
 * Documents as the API shows them, wherever one is shown (a list, a read, a memory's source):
 * each titled without the sentences forgotten from it, read for all of them in one statement.
 */
export async function documentRecords(db: Db, rows: readonly RecordRow[]): Promise<Document[]> {
  const titled = rows.filter((r) => r.title).map((r) => r.id);
  const forgotten = new Map<string, string[]>();
  if (titled.length > 0) {
    const p = new Params(db.dialect);
    const found = await statement<{ document_id: string; sentence: string }>(
      db,
      `SELECT DISTINCT document_id, sentence FROM forgotten_sentences WHERE ${p.isIn("document_id", titled, "text")}`,
    ).all(...p.values);
    for (const f of found)
      forgotten.set(f.document_id, [...(forgotten.get(f.document_id) ?? []), f.sentence]);
  }
  // Longest first, as forgottenSentences gives them: a longer sentence may hold a shorter one.
  const ordered = (list: string[]) => list.sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  return rows.map((r) => toDocument(r, { forgotten: ordered(forgotten.get(r.id) ?? []) }));
}

/** One document as the API shows it (documentRecords), with the parts asked for. */
export async function documentRecord(
  db: Db,
  row: RecordRow,
  extra?: { chunks?: Chunk[]; memories?: Memory[] },
): Promise<Document> {
  const [doc] = await documentRecords(db, [row]);
  return {
    ...doc!,
    ...(extra?.chunks ? { chunks: extra.chunks } : {}),
    ...(extra?.memories ? { memories: extra.memories } : {}),
  };
}

export function toChunk(c: ChunkRow, metadata: Metadata): Chunk {
  return {
    id: c.id,
    documentId: c.document_id,
    position: c.position,
    content: c.content,
    type: c.type,
    metadata,
    system: { createdAt: c.created_at },
  };
}

export async function chunksOfDocument(db: Db, doc: Pick<DocumentRow, "id" | "metadata">): Promise<Chunk[]> {
  const metadata = parseJson<Metadata>(doc.metadata, {});
  const rows = await statement<ChunkRow>(
    db,
    "SELECT * FROM chunks WHERE document_id = $1 ORDER BY position",
  ).all(doc.id);
  return rows.map((r) => toChunk(r, metadata));
}

const documentTarget = { metadata: "d.metadata", source: "d.source", type: "d.type", documentId: "d.id" };

export async function listDocuments(
  db: Db,
  namespaceId: string | readonly string[],
  page: PageRequest,
  filter: Filter | undefined,
): Promise<Page<Document>> {
  const p = new Params(db.dialect);
  const from = `FROM documents d WHERE ${inNamespaces("d.namespace_id", namespaceId, p)}
    AND ${compileFilter(filter, documentTarget, p, filterFormFor(db))}`;
  const total = (await statement<{ n: number }>(db, `SELECT count(*) AS n ${from}`).get(...p.values))!.n;
  const rows = await statement<DocumentRow>(
    db,
    `SELECT ${RECORD_COLUMNS} ${from} ORDER BY ${orderBy("d", page)} LIMIT ${p.add(page.limit)} OFFSET ${p.add((page.page - 1) * page.limit)}`,
  ).all(...p.values);
  return { items: await documentRecords(db, rows), total };
}

/** Chunks of the namespace's indexed documents; the filter applies to their document. */
export async function listChunks(
  db: Db,
  namespaceId: string,
  page: PageRequest,
  filter: Filter | undefined,
): Promise<Page<Chunk>> {
  const p = new Params(db.dialect, namespaceId);
  const from = `FROM chunks c JOIN documents d ON d.id = c.document_id
    WHERE c.namespace_id = $1 AND d.status = 'done' AND ${compileFilter(filter, documentTarget, p, filterFormFor(db))}`;
  const total = (await statement<{ n: number }>(db, `SELECT count(*) AS n ${from}`).get(...p.values))!.n;
  // Chunks have no updated_at: they are replaced, never changed.
  const rows = await statement<ChunkRow & { document_metadata: string }>(
    db,
    `SELECT c.*, d.metadata AS document_metadata ${from} ORDER BY ${orderBy("c", page, false)} LIMIT ${p.add(page.limit)} OFFSET ${p.add((page.page - 1) * page.limit)}`,
  ).all(...p.values);
  return { items: rows.map((r) => toChunk(r, parseJson<Metadata>(r.document_metadata, {}))), total };
}

/**
 * Deletes documents of one namespace by service or caller id, with their chunks, vectors and
 * jobs, and the memories left without any source. Unknown ids are reported, not fatal.
 */
export async function deleteDocuments(
  db: Db,
  namespaceId: string,
  ids: readonly string[],
): Promise<{ count: number; errors: { id: string; error: string }[] }> {
  return await namespaceTransaction(db, namespaceId, async () => {
    let count = 0;
    const errors: { id: string; error: string }[] = [];
    for (const id of ids) {
      const doc = await findDocument(db, namespaceId, id);
      if (!doc) {
        errors.push({ id, error: "document not found" });
        continue;
      }
      await statement(
        db,
        `DELETE FROM memories WHERE namespace_id = $1
           AND (document_id = $2 OR id IN (SELECT memory_id FROM memory_sources WHERE document_id = $3))
           AND NOT EXISTS (SELECT 1 FROM memory_sources s WHERE s.memory_id = memories.id AND s.document_id != $4)`,
      ).run(namespaceId, doc.id, doc.id, doc.id);
      await statement(db, "DELETE FROM documents WHERE id = $1").run(doc.id);
      count++;
    }
    return { count, errors };
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

/** Indexed documents of a namespace still waiting for memories, oldest `documentDate` first. */
export async function documentsAwaitingDreams(
  db: Db,
  namespaceId: string,
  limit: number,
): Promise<DocumentRow[]> {
  return await statement<DocumentRow>(
    db,
    `SELECT * FROM documents WHERE namespace_id = $1 AND status = 'done' AND dreaming_status = 'dreaming'
     ORDER BY COALESCE(document_date, created_at), created_at, rowid LIMIT $2`,
  ).all(namespaceId, limit);
}

/** How many indexed documents of a namespace wait for memories. */
export async function countAwaitingDreams(db: Db, namespaceId: string): Promise<number> {
  return (await statement<{ n: number }>(
    db,
    "SELECT count(*) AS n FROM documents WHERE namespace_id = $1 AND status = 'done' AND dreaming_status = 'dreaming'",
  ).get(namespaceId))!.n;
}

/** The namespaces with indexed documents waiting for memories. */
export async function namespacesAwaitingDreams(db: Db): Promise<string[]> {
  return (
    await statement<{ namespace_id: string }>(
      db,
      "SELECT DISTINCT namespace_id FROM documents WHERE status = 'done' AND dreaming_status = 'dreaming'",
    ).all()
  ).map((r) => r.namespace_id);
}

/**
 * The one rule for stale work on a document: work on its generation `generation` is current while
 * the document exists with that generation (an upsert makes a newer one, a delete none). As SQL
 * over the documents table, its id and generation bound as `id` and `generation`.
 */
const atGeneration = (id: string, generation: string) => `id = ${id} AND generation = ${generation}`;

/** The document while work on its generation `generation` is current (atGeneration), else undefined. */
export async function documentAtGeneration(
  db: Db,
  id: string,
  generation: number,
): Promise<DocumentRow | undefined> {
  return await statement<DocumentRow>(db, `SELECT * FROM documents WHERE ${atGeneration("$1", "$2")}`).get(
    id,
    generation,
  );
}

/**
 * Inside a transaction that commits work on a document's generation: the document, locked until
 * the commit (an upsert of it waits for this one, or this one sees its generation), when that work
 * is current (atGeneration), else undefined. A document moved to another namespace meanwhile (its
 * namespace deleted with moveTo) was worked on under the old namespace's lock: DocumentMovedError,
 * and its job runs again where the document is now.
 */
export async function lockedAtGeneration(
  db: Db,
  ref: { id: string; namespaceId: string },
  generation: number,
): Promise<DocumentRow | undefined> {
  return (await lockedWithMemoryVersion(db, ref, generation, false))?.doc;
}

/**
 * lockedAtGeneration, with what a commit of memories drafted at a memory version checks, read by
 * the same statement when `withMemories` (a round trip each less): its namespace's memory version
 * (memory-draft.ts memoryVersion) and whether any sentence was forgotten from it (forgotten.ts);
 * without, neither is read (0, and true: a caller that looks reads the sentences).
 */
export async function lockedWithMemoryVersion(
  db: Db,
  ref: { id: string; namespaceId: string },
  generation: number,
  withMemories = true,
): Promise<{ doc: DocumentRow; memoryVersion: number; hasForgotten: boolean } | undefined> {
  const [version, forgottenAny] = withMemories
    ? [
        "COALESCE((SELECT v.version FROM memory_versions v WHERE v.namespace_id = documents.namespace_id), 0)",
        "CASE WHEN EXISTS (SELECT 1 FROM forgotten_sentences f WHERE f.document_id = documents.id) THEN 1 ELSE 0 END",
      ]
    : ["0", "1"];
  const row = await statement<DocumentRow & { memctx_memory_version: number; memctx_forgotten: number }>(
    db,
    `SELECT documents.*, ${version} AS memctx_memory_version, ${forgottenAny} AS memctx_forgotten
     FROM documents WHERE ${atGeneration("$1", "$2")}${db.dialect.forUpdate}`,
  ).get(ref.id, generation);
  if (!row) return undefined;
  const { memctx_memory_version: memoryVersion, memctx_forgotten: forgotten, ...doc } = row;
  if (doc.namespace_id !== ref.namespaceId) throw new DocumentMovedError(ref.id);
  return { doc, memoryVersion, hasForgotten: forgotten === 1 };
}

/**
 * A document moved to another namespace while it was processed: its work was done under the old
 * namespace's lock, and is done again (a retryable job failure).
 */
export class DocumentMovedError extends Error {
  constructor(id: string) {
    super(`document ${id} moved to another namespace while it was processed; it is processed again`);
    this.name = "DocumentMovedError";
  }
}

/**
 * Sets a processing state, unless the document was changed (upserted) or deleted since this
 * generation: then the caller's work is stale and it gets false.
 */
export async function setDocumentStatus(
  db: Db,
  id: string,
  generation: number,
  status: DocumentStatus,
  error: string | null = null,
): Promise<boolean> {
  const extra = status === "failed" ? ", dreaming_status = 'done'" : "";
  const r = await statement(
    db,
    `UPDATE documents SET status = $1, error = $2, updated_at = $3${extra} WHERE ${atGeneration("$4", "$5")}`,
  ).run(status, error, now(), id, generation);
  return r.changes > 0;
}

export async function setDreamingStatus(
  db: Db,
  ids: readonly string[],
  status: "dreaming" | "done",
): Promise<void> {
  await statement(
    db,
    `UPDATE documents SET dreaming_status = $1, updated_at = $2
     WHERE ${db.dialect.isIn("id", "$3", "text")}`,
  ).run(status, now(), db.dialect.list(ids));
}

/** How much of the document's text its stored memories were drawn from (see DocumentRow.dreamed_chars). */
export async function setDreamedChars(db: Db, id: string, chars: number | null): Promise<void> {
  await statement(db, "UPDATE documents SET dreamed_chars = $1 WHERE id = $2").run(chars, id);
}

/**
 * markDreamed's update with its values at the given parameters (a statement's own, or a clause of
 * a larger statement: store/document-commit.ts writes it with the memories).
 */
export const markDreamedSql = (chars: string, at: string, id: string) =>
  `UPDATE documents SET dreaming_status = 'done', dreamed_chars = CAST(${chars} AS BIGINT), updated_at = ${at} WHERE id = ${id}`;

/** The document's memories are committed, drawn from its first `chars` characters (setDreamedChars): `done`. */
export async function markDreamed(db: Db, id: string, chars: number | null): Promise<void> {
  await statement(db, markDreamedSql("$1", "$2", "$3")).run(chars, now(), id);
}

/**
 * What a document's processing left out by a limit (a `done` document keeps its status): shown as
 * its `error`, so that a reader knows why some of its text gave no memories.
 */
export async function noteDocument(db: Db, id: string, note: string): Promise<void> {
  await statement(db, "UPDATE documents SET error = $1, updated_at = $2 WHERE id = $3").run(note, now(), id);
}

export interface IndexedDocument {
  text: string;
  format: "plain" | "conversation";
  title: string | null;
  type: string;
  url: string | null;
  /** The document's day label (`[8 May 2023]`), put before each chunk's content in search. */
  label?: string | null;
  chunks: NewChunk[];
  /**
   * When an embedder is configured: a vector per chunk, by index; none for a chunk whose stored
   * row is kept with its vector (see storedChunks).
   */
  vectors?: { model: string; embeddings: (Float32Array | undefined)[] };
}

export interface NewChunk {
  content: string;
  position: number;
  start: number;
  end: number;
  speaker?: string | undefined;
  context?: string | undefined;
}

/** A stored chunk as indexing compares it with a new one, and whether it holds a vector of the model. */
interface StoredChunk {
  rowid: number;
  position: number;
  content: string;
  start_offset: number;
  end_offset: number;
  type: string;
  label: string | null;
  speaker: string | null;
  context: string;
  has_vector: number;
}

const sameText = (stored: StoredChunk | undefined, c: NewChunk): stored is StoredChunk =>
  stored !== undefined &&
  stored.content === c.content &&
  stored.start_offset === c.start &&
  stored.end_offset === c.end;

/** The document's stored chunks by position, each saying whether it holds a vector of `model`. */
async function storedChunks(
  db: Db,
  documentId: string,
  model: string | null,
): Promise<Map<number, StoredChunk>> {
  const rows = await statement<StoredChunk>(
    db,
    `SELECT c.rowid, c.position, c.content, c.start_offset, c.end_offset, c.type, c.label, c.speaker, c.context,
         v.chunk_rowid IS NOT NULL AS has_vector
       FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_rowid = c.rowid AND v.model = $1
       WHERE c.document_id = $2`,
  ).all(model, documentId);
  return new Map(rows.map((r) => [r.position, r]));
}

/**
 * Which of the new chunks (by index) need a vector of `model`: those not stored already with the
 * same text at the same place and a vector. An appended conversation turn embeds itself alone.
 */
export async function chunksToEmbed(
  db: Db,
  documentId: string,
  chunks: readonly NewChunk[],
  model: string,
): Promise<number[]> {
  const stored = await storedChunks(db, documentId, model);
  return chunks.flatMap((c, i) => {
    const old = stored.get(c.position);
    return sameText(old, c) && old.has_vector ? [] : [i];
  });
}

/**
 * Replaces a document's chunks (and vectors) by new ones and marks it `done`, inside the
 * transaction that commits its generation (document-commit.ts): a search sees the old chunks or
 * the new ones, never a mix. The new chunks lose the sentences forgotten from the document as they
 * stand now (text/redact.ts redactChunks; a chunk the caller embedded before a forget loses its
 * vector). A stored chunk with the same text at the same place stays (its id, date and vector),
 * with its label, speaker and context brought up to date where they changed (the last turns'
 * context when turns are appended): re-indexing a grown conversation writes only what changed.
 */
export async function swapChunks(db: Db, doc: DocumentRow, ix: IndexedDocument): Promise<void> {
  const id = doc.id;
  // The namespace's chunk index before any chunk is written: indexers of one namespace take turns
  // (its statistics take one writer at a time) and every writer locks the index rows in one order.
  await lockSearchSpace(db, doc.namespace_id, "chunks");
  ix = withoutForgotten(ix, await forgottenSentences(db, id));
  const stored = await storedChunks(db, id, ix.vectors?.model ?? null);
  const label = ix.label ?? null;
  const kept = new Map<number, StoredChunk>();
  for (const c of ix.chunks) {
    const old = stored.get(c.position);
    if (sameText(old, c)) kept.set(c.position, old);
  }
  const dropped = [...stored.values()].filter((r) => kept.get(r.position) !== r).map((r) => r.rowid);
  if (dropped.length) {
    await statement(db, `DELETE FROM chunks WHERE ${db.dialect.isIn("rowid", "$1", "bigint")}`).run(
      db.dialect.list(dropped),
    );
  }
  const t = now();
  const insert = statement<{ rowid: number }>(
    db,
    `INSERT INTO chunks (id, document_id, namespace_id, position, content, type, start_offset, end_offset, label,
       speaker, context, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING rowid`,
  );
  // Only a changed value is written: an update re-indexes the chunk for search.
  const update = statement(
    db,
    "UPDATE chunks SET type = $1, label = $2, speaker = $3, context = $4 WHERE rowid = $5",
  );
  const putVector = statement(
    db,
    `INSERT INTO chunk_vectors (chunk_rowid, model, embedding) VALUES ($1, $2, $3)
     ON CONFLICT (chunk_rowid) DO UPDATE SET model = excluded.model, embedding = excluded.embedding`,
  );
  // A database server: the new chunks in a few statements rather than one each (each statement
  // costs a round trip there: 65k chunks of a 50 MB file took 26 s one by one on PostgreSQL).
  const inserted = db.dialect.remote ? await insertChunksAtOnce(db, id, doc.namespace_id, ix, kept, t) : null;
  for (const [i, c] of ix.chunks.entries()) {
    const speaker = c.speaker?.toLowerCase() ?? null;
    const context = c.context ?? "";
    const old = kept.get(c.position);
    let rowid: number;
    if (old) {
      rowid = old.rowid;
      if (old.type !== ix.type || old.label !== label || old.speaker !== speaker || old.context !== context) {
        await update.run(ix.type, label, speaker, context, rowid);
      }
    } else if (inserted) {
      rowid = inserted.get(c.position)!;
    } else {
      const row = (await insert.get(
        newId("chk"),
        id,
        doc.namespace_id,
        c.position,
        c.content,
        ix.type,
        c.start,
        c.end,
        label,
        speaker,
        context,
        t,
      ))!;
      rowid = row.rowid;
    }
    const v = ix.vectors?.embeddings[i];
    if (v && ix.vectors) {
      await putVector.run(rowid, ix.vectors.model, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    }
  }
  // An uploaded file's document shows the file's text as its content (its bytes stay in document_files).
  await statement(
    db,
    `UPDATE documents SET text = $1, format = $2, title = COALESCE($3, title), type = $4, url = $5, status = 'done',
       error = NULL, updated_at = $6,
       content = CASE WHEN EXISTS (SELECT 1 FROM document_files WHERE document_id = documents.id) THEN $1 ELSE content END
     WHERE id = $7`,
  ).run(ix.text, ix.format, ix.title, ix.type, ix.url, t, id);
}

/**
 * The document's new chunks without its forgotten sentences (text/redact.ts redactChunks): a
 * chunk whose content changed loses the vector the caller made of it.
 */
function withoutForgotten(ix: IndexedDocument, sentences: readonly string[]): IndexedDocument {
  if (sentences.length === 0) return ix;
  const redacted = redactChunks(ix.text, ix.chunks, sentences);
  const chunks: NewChunk[] = [];
  const embeddings: (Float32Array | undefined)[] = [];
  ix.chunks.forEach((c, i) => {
    const r = redacted[i];
    if (r === null || r === undefined) return;
    chunks.push(r);
    embeddings.push(r.content === c.content ? ix.vectors?.embeddings[i] : undefined);
  });
  return { ...ix, chunks, ...(ix.vectors ? { vectors: { model: ix.vectors.model, embeddings } } : {}) };
}

/** Chunks inserted per statement by insertChunksAtOnce. */
const CHUNK_INSERT_BATCH = 1_000;

/** Inserts the chunks of `ix` that are not `kept`, a batch per statement; their rowids by position. */
async function insertChunksAtOnce(
  db: Db,
  documentId: string,
  namespaceId: string,
  ix: IndexedDocument,
  kept: ReadonlyMap<number, unknown>,
  t: string,
): Promise<Map<number, number>> {
  const insert = statement<{ rowid: number; position: number }>(
    db,
    `INSERT INTO chunks (id, document_id, namespace_id, position, content, type, start_offset, end_offset, label,
       speaker, context, created_at)
     SELECT j.value ->> 0, $2, $3, CAST(j.value ->> 1 AS BIGINT), j.value ->> 2, $4, CAST(j.value ->> 3 AS BIGINT),
       CAST(j.value ->> 4 AS BIGINT), $5, j.value ->> 5, j.value ->> 6, $6
     FROM ${db.dialect.rows("$1", "j")}
     RETURNING rowid, position`,
  );
  const rows = ix.chunks
    .filter((c) => !kept.has(c.position))
    .map((c) => [
      newId("chk"),
      c.position,
      c.content,
      c.start,
      c.end,
      c.speaker?.toLowerCase() ?? null,
      c.context ?? "",
    ]);
  const out = new Map<number, number>();
  for (let at = 0; at < rows.length; at += CHUNK_INSERT_BATCH) {
    const got = await insert.all(
      JSON.stringify(rows.slice(at, at + CHUNK_INSERT_BATCH)),
      documentId,
      namespaceId,
      ix.type,
      ix.label ?? null,
      t,
    );
    for (const r of got) out.set(r.position, r.rowid);
  }
  return out;
}
