import type { Metadata } from "../../api/common.js";
import type { Filter } from "../../api/filter.js";
import type { Memory } from "../../api/memories.js";
import { numbered, Params, valuesRows } from "./connection.js";
import { type Db, newId, now, parseJson, sha256 } from "./db.js";
import { compileFilter, filterFormFor } from "./filter.js";
import { inNamespaces, orderBy, type Page, type PageRequest } from "./pages.js";
import { memoriesHolding, memoryTermCounts, type ReadAheadHolding } from "./search-index.js";
import { statement } from "./statements.js";

/** Whose a fact is (memory/extract/types.ts), as stored. */
export type SubjectKind = "user" | "person" | "thing" | "document";
/** Whether a fact says its value is so, or no longer so. */
export type Polarity = "is" | "no_longer";

export interface MemoryRow {
  rowid: number;
  id: string;
  namespace_id: string;
  memory: string;
  metadata: string;
  is_static: number;
  is_inference: number;
  is_latest: number;
  is_forgotten: number;
  version: number;
  parent_memory_id: string | null;
  root_memory_id: string | null;
  forget_after: string | null;
  forget_reason: string | null;
  subject: string | null;
  /** Whose the fact is: user, person, thing or document (null: a memory from before facts had kinds). */
  subject_kind: SubjectKind | null;
  attribute: string | null;
  /** The value the fact gives its attribute ("Berlin" for home), when it names one. */
  fact_value: string | null;
  /** 'no_longer': the fact says the value is no longer so ("no longer drinks coffee"). */
  polarity: Polarity;
  event_date: string | null;
  document_id: string | null;
  /** Who said the source turn, lowercased (conversations). */
  speaker: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * MemoryRow's columns, as read by every query here: a memory's `context` (the turns around its
 * source, for search) and `memory_key` stay on disk. Relation detection reads a few hundred rows
 * for each document it dreams, and the context was most of their bytes.
 */
const COLUMNS = [
  "rowid",
  "id",
  "namespace_id",
  "memory",
  "metadata",
  "is_static",
  "is_inference",
  "is_latest",
  "is_forgotten",
  "version",
  "parent_memory_id",
  "root_memory_id",
  "forget_after",
  "forget_reason",
  "subject",
  "subject_kind",
  "attribute",
  "fact_value",
  "polarity",
  "event_date",
  "document_id",
  "speaker",
  "created_at",
  "updated_at",
];
const ROW = COLUMNS.join(", ");
/** MemoryRow's columns over alias `m`. */
export const M_ROW = COLUMNS.map((c) => `m.${c}`).join(", ");

/*
 * The one rule of a live memory: not forgotten, and not past its forget_after (a moment, not a
 * write, ends it). Written here once, for rows (isForgotten, isExpired) and for SQL over an alias
 * (liveMemory, expiredMemory); every read that shows memories, and the namespace's count, use it.
 * The namespace's counter (its triggers, schema steps 3 / 6) counts the writes' part of it,
 * currentMemory: a trigger cannot see time pass, so the count subtracts the current memories
 * expired by the time it is read (namespaces.ts).
 */

/** Past its forget_after at `at`. */
export const isExpired = (m: Pick<MemoryRow, "forget_after">, at = new Date().toISOString()) =>
  m.forget_after !== null && m.forget_after <= at;

/** Forgotten, or past its forget_after at `at`: not live. */
export const isForgotten = (m: MemoryRow, at = new Date().toISOString()) =>
  m.is_forgotten === 1 || isExpired(m, at);

/** SQL of isExpired over alias `m`, `at` a parameter's name. */
export const expiredMemory = (m: string, at: string) =>
  `(${m}.forget_after IS NOT NULL AND ${m}.forget_after <= ${at})`;

/** SQL of a live memory over alias `m` (not isForgotten), `at` a parameter's name. */
export const liveMemory = (m: string, at: string) =>
  `(${m}.is_forgotten = 0 AND (${m}.forget_after IS NULL OR ${m}.forget_after > ${at}))`;

/** What the namespaces' memory counters count: latest memories not forgotten (live unless expired). */
export const currentMemory = (m: string) => `${m}.is_latest = 1 AND ${m}.is_forgotten = 0`;

export function toMemory(m: MemoryRow): Memory {
  return {
    id: m.id,
    memory: m.memory,
    metadata: parseJson<Metadata>(m.metadata, {}),
    isStatic: m.is_static === 1,
    isInference: m.is_inference === 1,
    isLatest: m.is_latest === 1,
    isForgotten: isForgotten(m),
    version: m.version,
    parentMemoryId: m.parent_memory_id,
    rootMemoryId: m.root_memory_id,
    forgetAfter: m.forget_after,
    forgetReason: m.forget_reason,
    documentId: m.document_id,
    system: { createdAt: m.created_at, updatedAt: m.updated_at },
  };
}

/** Memories of a namespace, newest first by default; forgotten ones only when asked. */
export async function listMemories(
  db: Db,
  namespaceId: string | readonly string[],
  page: PageRequest,
  filter: Filter | undefined,
  includeForgotten: boolean,
): Promise<Page<Memory>> {
  const p = new Params(db.dialect);
  const scope = inNamespaces("m.namespace_id", namespaceId, p);
  // A plain list shows what is true now: live, latest versions. include.forgotten shows every row.
  const live = includeForgotten
    ? "TRUE"
    : `m.is_latest = 1 AND ${liveMemory("m", p.add(new Date().toISOString()))}`;
  const f = compileFilter(
    filter,
    {
      metadata: "m.metadata",
      source: "d.source",
      type: "d.type",
      documentId: "m.document_id",
    },
    p,
    filterFormFor(db),
  );
  const from = `FROM memories m LEFT JOIN documents d ON d.id = m.document_id
    WHERE ${scope} AND ${live} AND ${f}`;
  const total = (await statement<{ n: number }>(db, `SELECT count(*) AS n ${from}`).get(...p.values))!.n;
  const rows = await statement<MemoryRow>(
    db,
    `SELECT ${M_ROW} ${from} ORDER BY ${orderBy("m", page)} LIMIT ${p.add(page.limit)} OFFSET ${p.add((page.page - 1) * page.limit)}`,
  ).all(...p.values);
  return { items: rows.map(toMemory), total };
}

/**
 * Memories that came from a document (its sources, or its latest source): those not forgotten
 * nor past their forget_after (as a plain list shows them), or every one with `includeForgotten`.
 */
export async function memoriesOfDocument(
  db: Db,
  documentId: string,
  includeForgotten = false,
): Promise<Memory[]> {
  const rows = await statement<MemoryRow>(
    db,
    `SELECT ${M_ROW} FROM memories m WHERE (m.document_id = $1
         OR m.id IN (SELECT memory_id FROM memory_sources WHERE document_id = $2))
         AND ($3 = 1 OR ${liveMemory("m", "$4")})
       ORDER BY m.created_at, m.rowid`,
  ).all(documentId, documentId, includeForgotten ? 1 : 0, new Date().toISOString());
  return rows.map(toMemory);
}

/*
 * Memory rows as the memory services write and read them. Every function is scoped by namespace and
 * expects to run inside the caller's transaction when it writes.
 */

/** A memory's text as repeats are compared: lowercase, punctuation and spacing ignored. */
export const normalizeMemory = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

/** The `memory_key` column: equal for texts equal once normalized. */
export const memoryKey = (text: string) => sha256(normalizeMemory(text)).slice(0, 32);

export interface NewMemoryRow {
  namespaceId: string;
  memory: string;
  metadata: Metadata;
  isStatic: boolean;
  isInference: boolean;
  subject: string | null;
  /** Whose the fact is; absent or null: not known (a memory written directly). */
  subjectKind?: SubjectKind | null | undefined;
  attribute: string | null;
  /** The value the fact gives its attribute. */
  value?: string | null | undefined;
  /** Default 'is'. */
  polarity?: Polarity | undefined;
  eventDate: string | null;
  forgetAfter: string | null;
  /** Set when the memory is written with its expiry's reason (legacy v4 writes). */
  forgetReason?: string | null | undefined;
  /** Its source document; null for a memory written directly (legacy v4), which has no source. */
  documentId: string | null;
  source?: { start: number; end: number } | undefined;
  /** The version this one supersedes (an `updates` relation). */
  parent?: MemoryRow | undefined;
  /** Its embedding, when an embedder is configured. */
  vector?: { model: string; embedding: Float32Array } | undefined;
  /** `[day]` and its source turn with the turns around it (indexed for search at a lower weight). */
  context?: string | undefined;
  /** Who said its source turn, lowercased. */
  speaker?: string | null | undefined;
}

/** Names one memory: by id, or by its text (the newest latest memory holding it, once normalized). */
export type MemorySelector = { id: string } | { content: string };

/** The memory a selector names in this namespace, if any. */
export async function findMemory(
  db: Db,
  namespaceId: string,
  s: MemorySelector,
): Promise<MemoryRow | undefined> {
  return "id" in s
    ? await getMemoryRow(db, namespaceId, s.id)
    : (await latestByKey(db, namespaceId, s.content))[0];
}

export async function getMemoryRow(db: Db, namespaceId: string, id: string): Promise<MemoryRow | undefined> {
  return await statement<MemoryRow>(
    db,
    `SELECT ${ROW} FROM memories WHERE id = $1 AND namespace_id = $2`,
  ).get(id, namespaceId);
}

/** The rowids of those of `ids` that are the namespace's latest versions. */
export async function latestRowids(
  db: Db,
  namespaceId: string,
  ids: readonly string[],
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await statement<{ id: string; rowid: number }>(
    db,
    `SELECT id, rowid FROM memories WHERE namespace_id = $1 AND is_latest = 1 AND ${db.dialect.isIn("id", "$2", "text")}`,
  ).all(namespaceId, db.dialect.list(ids));
  return new Map(rows.map((r) => [r.id, r.rowid]));
}

/** A memory of any of these namespaces (legacy lists span several). */
export async function getMemoryRowIn(
  db: Db,
  namespaceIds: readonly string[],
  id: string,
): Promise<MemoryRow | undefined> {
  return await statement<MemoryRow>(
    db,
    `SELECT ${ROW} FROM memories WHERE id = $1 AND ${db.dialect.isIn("namespace_id", "$2", "text")}`,
  ).get(id, db.dialect.list(namespaceIds));
}

/** The columns a new memory is inserted with (latest, not forgotten), its VALUES row and its values. */
const INSERTED_COLUMNS = `id, namespace_id, memory, metadata, is_static, is_inference, is_latest, is_forgotten,
  version, parent_memory_id, root_memory_id, forget_after, forget_reason, subject, subject_kind, attribute,
  fact_value, polarity, event_date, document_id, memory_key, context, speaker, created_at, updated_at`;
/** Values of one new memory (insertedValues) per VALUES row. */
const INSERTED_WIDTH = 23;
/** The VALUES row of the k-th memory of a statement. */
const insertedRow = (k: number) =>
  `(${numbered(k * INSERTED_WIDTH + 1, 6)}, 1, 0, ${numbered(k * INSERTED_WIDTH + 7, INSERTED_WIDTH - 6)})`;
function insertedValues(m: NewMemoryRow, id: string, version: number, root: string | null, t: string) {
  return [
    id,
    m.namespaceId,
    m.memory,
    JSON.stringify(m.metadata),
    m.isStatic ? 1 : 0,
    m.isInference ? 1 : 0,
    version,
    m.parent?.id ?? null,
    root,
    m.forgetAfter,
    m.forgetReason ?? null,
    m.subject,
    m.subjectKind ?? null,
    m.attribute,
    m.value ?? null,
    m.polarity ?? "is",
    m.eventDate,
    m.documentId,
    memoryKey(m.memory),
    m.context ?? "",
    m.speaker ?? null,
    t,
    t,
  ];
}

/** Inserts a memory with its first source; a parent is marked no longer latest. */
export async function insertMemory(db: Db, m: NewMemoryRow): Promise<MemoryRow> {
  const t = now();
  const id = newId("mem");
  const version = m.parent ? m.parent.version + 1 : 1;
  const root = m.parent ? (m.parent.root_memory_id ?? m.parent.id) : null;
  await statement(db, `INSERT INTO memories (${INSERTED_COLUMNS}) VALUES ${insertedRow(0)}`).run(
    ...insertedValues(m, id, version, root, t),
  );
  if (m.parent) {
    await statement(db, "UPDATE memories SET is_latest = 0, updated_at = $1 WHERE id = $2").run(
      t,
      m.parent.id,
    );
    await addRelation(db, id, m.parent.id, "updates");
  }
  if (m.documentId !== null) await addSource(db, id, m.documentId, m.source);
  const row = (await statement<MemoryRow>(db, `SELECT ${ROW} FROM memories WHERE id = $1`).get(id))!;
  if (m.vector) {
    const v = m.vector.embedding;
    await statement(
      db,
      "INSERT INTO memory_vectors (memory_rowid, model, embedding) VALUES ($1, $2, $3)",
    ).run(row.rowid, m.vector.model, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  }
  return row;
}

/** Memories per statement in insertMemories (20 parameters each: well under either backend's limit). */
const MEMORY_INSERT_BATCH = 200;

/**
 * insertMemory for many new memories at once (none replaces a parent version): the rows, their
 * sources and vectors a batch per statement instead of four statements each, which is what a
 * memory costs on PostgreSQL (a round trip per statement). Same rows as insertMemory; returns the
 * new ids in input order. Call inside a transaction.
 */
export async function insertMemories(db: Db, memories: readonly NewMemoryRow[]): Promise<string[]> {
  if (memories.some((m) => m.parent))
    throw new Error("insertMemories: a new version goes through insertMemory");
  const t = now();
  const ids = memories.map(() => newId("mem"));
  for (let at = 0; at < memories.length; at += MEMORY_INSERT_BATCH) {
    const batch = memories.slice(at, at + MEMORY_INSERT_BATCH);
    const batchIds = ids.slice(at, at + MEMORY_INSERT_BATCH);
    const rows = await statement<{ rowid: number; id: string }>(
      db,
      `INSERT INTO memories (${INSERTED_COLUMNS}) VALUES ${batch.map((_, k) => insertedRow(k)).join(", ")}
       RETURNING rowid, id`,
    ).all(...batch.flatMap((m, k) => insertedValues(m, batchIds[k]!, 1, null, t)));
    const rowids = new Map(rows.map((r) => [r.id, r.rowid]));
    const sourced = batch.flatMap((m, k) => (m.documentId === null ? [] : [{ m, id: batchIds[k]! }]));
    if (sourced.length > 0) {
      await statement(
        db,
        `INSERT INTO memory_sources (memory_id, document_id, start_offset, end_offset, created_at)
         VALUES ${valuesRows(sourced.length, 5)}`,
      ).run(
        ...sourced.flatMap(({ m, id }) => [
          id,
          m.documentId!,
          m.source?.start ?? null,
          m.source?.end ?? null,
          t,
        ]),
      );
    }
    const embedded = batch.flatMap((m, k) => (m.vector ? [{ v: m.vector, id: batchIds[k]! }] : []));
    if (embedded.length > 0) {
      await statement(
        db,
        `INSERT INTO memory_vectors (memory_rowid, model, embedding)
         VALUES ${valuesRows(embedded.length, 3)}`,
      ).run(
        ...embedded.flatMap(({ v, id }) => [
          rowids.get(id)!,
          v.model,
          new Uint8Array(v.embedding.buffer, v.embedding.byteOffset, v.embedding.byteLength),
        ]),
      );
    }
  }
  return ids;
}

export async function addRelation(
  db: Db,
  fromId: string,
  toId: string,
  relation: "updates" | "extends" | "derives",
) {
  await statement(
    db,
    `INSERT INTO memory_relations (from_id, to_id, relation, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
  ).run(fromId, toId, relation, now());
}

export async function addSource(
  db: Db,
  memoryId: string,
  documentId: string,
  span?: { start: number; end: number },
) {
  await statement(
    db,
    `INSERT INTO memory_sources (memory_id, document_id, start_offset, end_offset, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT(memory_id, document_id) DO UPDATE SET start_offset = excluded.start_offset,
       end_offset = excluded.end_offset`,
  ).run(memoryId, documentId, span?.start ?? null, span?.end ?? null, now());
}

/**
 * A repeated fact: the memory gains a source, and the new document becomes its latest source (its
 * metadata with it). A restated fact without an expiry keeps no expiry.
 */
export async function mergeSource(
  db: Db,
  existing: MemoryRow,
  documentId: string,
  metadata: Metadata,
  forgetAfter: string | null,
  span?: { start: number; end: number },
): Promise<void> {
  const expiry = mergedExpiry(
    existing.forget_after,
    forgetAfter,
    !(await hasOtherSource(db, existing.id, documentId)),
  );
  await statement(
    db,
    "UPDATE memories SET document_id = $1, metadata = $2, forget_after = $3, updated_at = $4 WHERE id = $5",
  ).run(documentId, JSON.stringify(metadata), expiry, now(), existing.id);
  await addSource(db, existing.id, documentId, span);
}

/** Whether a memory has a source other than `documentId`. */
export async function hasOtherSource(db: Db, memoryId: string, documentId: string): Promise<boolean> {
  return (
    (await statement(
      db,
      "SELECT 1 FROM memory_sources WHERE memory_id = $1 AND document_id != $2 LIMIT 1",
    ).get(memoryId, documentId)) !== undefined
  );
}

/**
 * A repeated fact's expiry: told again by its only source (a re-sent document), that source's
 * expiry now, whatever it was; else the later of the two, none when either has none.
 */
export function mergedExpiry(
  existing: string | null,
  told: string | null,
  onlyThisSource: boolean,
): string | null {
  if (onlyThisSource) return told;
  if (existing === null || told === null) return null;
  return existing > told ? existing : told;
}

/** The memories a document is a source of. */
export async function documentMemoryIds(db: Db, documentId: string): Promise<string[]> {
  return (
    await statement<{ id: string }>(
      db,
      `SELECT memory_id AS id FROM memory_sources WHERE document_id = $1
       UNION SELECT id FROM memories WHERE document_id = $2`,
    ).all(documentId, documentId)
  ).map((r) => r.id);
}

/**
 * Takes a document away as a source of `memoryIds` (it no longer says them): a memory left with
 * no source is deleted, as deleting the document would; one that others still support points at
 * its latest other source.
 */
export async function releaseDocument(
  db: Db,
  namespaceId: string,
  documentId: string,
  memoryIds: readonly string[],
) {
  for (const id of memoryIds) {
    await statement(db, "DELETE FROM memory_sources WHERE memory_id = $1 AND document_id = $2").run(
      id,
      documentId,
    );
    const next = await statement<{ document_id: string }>(
      db,
      "SELECT document_id FROM memory_sources WHERE memory_id = $1 ORDER BY created_at DESC, rowid DESC LIMIT 1",
    ).get(id);
    if (!next)
      await statement(db, "DELETE FROM memories WHERE id = $1 AND namespace_id = $2").run(id, namespaceId);
    else
      await statement(
        db,
        "UPDATE memories SET document_id = $1, updated_at = $2 WHERE id = $3 AND document_id = $4",
      ).run(next.document_id, now(), id, documentId);
  }
}

/** Latest memories of one subject and attribute that a new fact is compared with. */
export const SLOT_CANDIDATES = 20;
/** Latest memories of one text that a new fact is compared with. */
export const KEY_CANDIDATES = 5;

/** Latest memories about one subject and attribute (newest first), live or explicitly forgotten. */
export async function latestBySubjectAttribute(
  db: Db,
  namespaceId: string,
  subject: string,
  attribute: string,
  limit = SLOT_CANDIDATES,
): Promise<MemoryRow[]> {
  return await statement<MemoryRow>(
    db,
    `SELECT ${M_ROW} FROM memories m WHERE m.namespace_id = $1 AND m.subject = $2 AND m.attribute = $3 AND m.is_latest = 1
     ORDER BY m.created_at DESC, m.rowid DESC LIMIT $4`,
  ).all(namespaceId, subject, attribute, limit);
}

/**
 * The most recent latest memories about one subject (newest first), at most `limit`: a subject
 * with thousands of memories ("user") is not scanned whole for each new fact.
 */
export async function latestBySubject(
  db: Db,
  namespaceId: string,
  subject: string,
  limit: number,
): Promise<MemoryRow[]> {
  return await statement<MemoryRow>(
    db,
    `SELECT ${M_ROW} FROM memories m
     WHERE m.namespace_id = $1 AND m.subject = $2 AND m.is_latest = 1
     ORDER BY m.created_at DESC, m.rowid DESC LIMIT $3`,
  ).all(namespaceId, subject, limit);
}

/** Latest memories whose text equals `text` once normalized (a fact told again), newest first. */
export async function latestByKey(
  db: Db,
  namespaceId: string,
  text: string,
  limit = KEY_CANDIDATES,
): Promise<MemoryRow[]> {
  return await statement<MemoryRow>(
    db,
    `SELECT ${M_ROW} FROM memories m WHERE m.namespace_id = $1 AND m.memory_key = $2 AND m.is_latest = 1
     ORDER BY m.created_at DESC, m.rowid DESC LIMIT $3`,
  ).all(namespaceId, memoryKey(text), limit);
}

/** Those of `ids` whose subject is `subject`, in the store's order. */
export async function memoriesAbout(db: Db, ids: readonly string[], subject: string): Promise<string[]> {
  return (
    await statement<{ id: string }>(
      db,
      `SELECT id FROM memories WHERE ${db.dialect.isIn("id", "$1", "text")} AND subject = $2`,
    ).all(db.dialect.list(ids), subject)
  ).map((r) => r.id);
}

/** How many of the namespace's memories hold each stem in their own text. */
export async function memoryTermFrequency(
  db: Db,
  namespaceId: string,
  stems: readonly string[],
): Promise<number[]> {
  const { textUnits } = await memoryTermCounts(db, namespaceId, stems);
  return stems.map((s) => textUnits.get(s) ?? 0);
}

/**
 * Latest memories of the namespace whose text holds some of `stems`, those holding the most
 * (rarer stems counting more) first. Reads the stems' postings in this namespace: keep them to
 * rare words.
 */
export function latestByText(
  db: Db,
  namespaceId: string,
  stems: readonly string[],
  limit: number,
  ahead?: ReadAheadHolding<MemoryRow>,
): Promise<MemoryRow[]> {
  return memoriesHolding<MemoryRow>(
    db,
    namespaceId,
    stems,
    (p) => `m.namespace_id = ${p.add(namespaceId)} AND m.is_latest = 1`,
    limit,
    M_ROW,
    ahead,
  );
}

/**
 * The namespace's most recent live, latest memories (the extractor's context): their ids, texts
 * and metadata only (a document's dreaming reads a few hundred).
 */
export async function recentLiveMemories(
  db: Db,
  namespaceId: string,
  limit: number,
  /** A document whose memories (documentMemoryIds: those it is a source of) are left out. */
  notOf?: string,
): Promise<Pick<MemoryRow, "id" | "memory" | "metadata">[]> {
  const ownLeftOut =
    notOf === undefined
      ? ""
      : `AND m.document_id IS DISTINCT FROM $4
         AND NOT EXISTS (SELECT 1 FROM memory_sources s WHERE s.memory_id = m.id AND s.document_id = $4)`;
  return await statement<Pick<MemoryRow, "id" | "memory" | "metadata">>(
    db,
    `SELECT m.id, m.memory, m.metadata FROM memories m
     WHERE m.namespace_id = $1 AND m.is_latest = 1 AND ${liveMemory("m", "$2")} ${ownLeftOut}
     ORDER BY m.created_at DESC, m.rowid DESC LIMIT $3`,
  ).all(namespaceId, now(), limit, ...(notOf === undefined ? [] : [notOf]));
}

export async function markForgotten(db: Db, id: string, reason: string): Promise<void> {
  await statement(
    db,
    "UPDATE memories SET is_forgotten = 1, forget_reason = COALESCE(forget_reason, $1), updated_at = $2 WHERE id = $3",
  ).run(reason, now(), id);
}

export const memoryMetadata = (m: Pick<MemoryRow, "metadata">): Metadata =>
  parseJson<Metadata>(m.metadata, {});

/** The documents a memory came from, most recent first (none for a memory written directly). */
export async function memorySourceDocumentIds(db: Db, memoryId: string): Promise<string[]> {
  return (
    await statement<{ id: string }>(
      db,
      "SELECT document_id AS id FROM memory_sources WHERE memory_id = $1 ORDER BY created_at DESC, rowid DESC",
    ).all(memoryId)
  ).map((r) => r.id);
}

/** The `extends` / `derives` relations of a memory, either way, with the memory at the other end. */
export async function memoryRelationRows(
  db: Db,
  memoryId: string,
): Promise<{ id: string; relation: string }[]> {
  return await statement<{ id: string; relation: string }>(
    db,
    `SELECT to_id AS id, relation FROM memory_relations WHERE from_id = $1 AND relation IN ('extends', 'derives')
     UNION SELECT from_id AS id, relation FROM memory_relations WHERE to_id = $1 AND relation IN ('extends', 'derives')`,
  ).all(memoryId);
}
