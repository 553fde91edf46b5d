import type { Metadata } from "../../api/common.js";
import type { Db } from "./connection.js";
import { newId, now } from "./db.js";
import * as stored from "./memories.js";
import { type MemoryRow, memoryKey, type NewMemoryRow } from "./memories.js";
import { statement } from "./statements.js";

export { isExpired, type MemoryRow, memoryMetadata, type NewMemoryRow, normalizeMemory } from "./memories.js";

/**
 * A document's memory writes, decided before they are written: relation detection
 * (memory/relations.ts) reads the namespace's memories and writes new ones, merges, versions and
 * relations into a draft, outside any transaction, and the store commits the draft with its
 * document in one operation (memory-commit.ts). Facts flow into the store as data: nothing of the
 * memory layer runs inside the store's transaction.
 *
 * A draft reads as the transaction it replaces did: the namespace's rows with the draft's own
 * writes over them (a later fact of the same document finds an earlier one, merged or retired
 * where the draft says so). It remembers the namespace's memory version (schema step 13) when it
 * began; the commit writes it only while the version is still that one (no other write of the
 * namespace's memories came between), else the caller drafts again.
 *
 * The functions here are memories.ts's, with a draft where those take a connection.
 */
export class MemoryDraft {
  /** New memories, in the order they were written (their rowids are provisional). */
  readonly inserted: DraftedMemory[] = [];
  /** Existing rows the draft changes, by id: what it sets. */
  readonly changed = new Map<string, ChangedMemory>();
  /** `updates` / `extends` / `derives` relations, in order (from, to, relation). */
  readonly relations: [string, string, "updates" | "extends" | "derives"][] = [];
  private readonly byId = new Map<string, DraftedMemory>();
  /** Provisional rowids: above any stored one, in insertion order (rows order by rowid on ties). */
  private nextRowid = 2 ** 52;

  private constructor(
    readonly db: Db,
    readonly namespaceId: string,
    /** The namespace's memory version the draft read its rows at. */
    readonly version: number,
  ) {}

  /** Begins a draft of the namespace's memories at its current version. */
  static async begin(db: Db, namespaceId: string): Promise<MemoryDraft> {
    return new MemoryDraft(db, namespaceId, await memoryVersion(db, namespaceId));
  }

  /** Whether the draft writes nothing. */
  get empty(): boolean {
    return this.inserted.length === 0 && this.changed.size === 0 && this.relations.length === 0;
  }

  drafted(id: string): DraftedMemory | undefined {
    return this.byId.get(id);
  }

  add(m: DraftedMemory): void {
    this.inserted.push(m);
    this.byId.set(m.row.id, m);
  }

  provisionalRowid(): number {
    return this.nextRowid++;
  }

  /** A stored row as the draft sees it (its changes over it), or a drafted row's copy. */
  view(row: MemoryRow): MemoryRow {
    const d = this.byId.get(row.id);
    if (d) return { ...d.row };
    const c = this.changed.get(row.id);
    return c ? { ...row, ...c.set } : row;
  }

  /** The change the draft makes to a stored row (made on first use). */
  change(row: MemoryRow): ChangedMemory {
    let c = this.changed.get(row.id);
    if (!c) {
      c = { set: {}, sources: new Map() };
      this.changed.set(row.id, c);
    }
    return c;
  }

  /** Stored rows the draft retired: a read of latest rows asks the store for this many more. */
  get retiredStored(): number {
    let n = 0;
    for (const c of this.changed.values()) if (c.set.is_latest === 0) n++;
    return n;
  }
}

/** A new memory of a draft, and what is written with it. */
export interface DraftedMemory {
  row: MemoryRow;
  memoryKey: string;
  context: string;
  vector?: { model: string; embedding: Float32Array } | undefined;
  /** Its sources: document id -> span. */
  sources: Map<string, { start: number; end: number } | undefined>;
}

/** What a draft changes in a stored memory: columns it sets, sources it adds (document id -> span). */
export interface ChangedMemory {
  set: Partial<Pick<MemoryRow, "is_latest" | "document_id" | "metadata" | "forget_after" | "updated_at">>;
  sources: Map<string, { start: number; end: number } | undefined>;
}

/** A namespace's memory version (0 before its first memory). */
export async function memoryVersion(db: Db, namespaceId: string): Promise<number> {
  const row = (await statement(db, "SELECT version FROM memory_versions WHERE namespace_id = $1").get(
    namespaceId,
  )) as { version: number } | undefined;
  return row?.version ?? 0;
}

/** Latest rows as the draft sees them: the store's (those it retired left out) and its own, newest first. */
function latest(
  draft: MemoryDraft,
  fromStore: readonly MemoryRow[],
  own: (d: DraftedMemory) => boolean,
  limit: number,
): MemoryRow[] {
  const rows = fromStore.map((r) => draft.view(r)).filter((r) => r.is_latest === 1);
  for (const d of draft.inserted) if (d.row.is_latest === 1 && own(d)) rows.push({ ...d.row });
  return rows.sort(newestFirst).slice(0, limit);
}

const newestFirst = (a: MemoryRow, b: MemoryRow) =>
  a.created_at === b.created_at ? b.rowid - a.rowid : a.created_at < b.created_at ? 1 : -1;

/** memories.ts latestByKey, as the draft sees the namespace. */
export async function latestByKey(
  draft: MemoryDraft,
  namespaceId: string,
  text: string,
): Promise<MemoryRow[]> {
  const key = memoryKey(text);
  const limit = stored.KEY_CANDIDATES;
  const rows = await stored.latestByKey(draft.db, namespaceId, text, limit + draft.retiredStored);
  return latest(draft, rows, (d) => d.row.namespace_id === namespaceId && d.memoryKey === key, limit);
}

/** memories.ts latestBySubjectAttribute, as the draft sees the namespace. */
export async function latestBySubjectAttribute(
  draft: MemoryDraft,
  namespaceId: string,
  subject: string,
  attribute: string,
): Promise<MemoryRow[]> {
  const limit = stored.SLOT_CANDIDATES;
  const rows = await stored.latestBySubjectAttribute(
    draft.db,
    namespaceId,
    subject,
    attribute,
    limit + draft.retiredStored,
  );
  return latest(
    draft,
    rows,
    ({ row: r }) => r.namespace_id === namespaceId && r.subject === subject && r.attribute === attribute,
    limit,
  );
}

/** memories.ts latestBySubject, as the draft sees the namespace. */
export async function latestBySubject(
  draft: MemoryDraft,
  namespaceId: string,
  subject: string,
  limit: number,
): Promise<MemoryRow[]> {
  const rows = await stored.latestBySubject(draft.db, namespaceId, subject, limit + draft.retiredStored);
  return latest(draft, rows, ({ row: r }) => r.namespace_id === namespaceId && r.subject === subject, limit);
}

/**
 * memories.ts latestByText, as the draft sees the namespace: the search index holds what was
 * committed only (a transaction's rows are indexed at its commit), so the draft's new memories are
 * not found by their words, as they were not inside the transaction this replaces.
 */
export async function latestByText(
  draft: MemoryDraft,
  namespaceId: string,
  stems: readonly string[],
  limit: number,
): Promise<MemoryRow[]> {
  const rows = await stored.latestByText(draft.db, namespaceId, stems, limit + draft.retiredStored);
  return rows
    .map((r) => draft.view(r))
    .filter((r) => r.is_latest === 1)
    .slice(0, limit);
}

/** memories.ts getMemoryRow, as the draft sees the namespace: a drafted row, or a stored one with the draft's changes. */
export async function memoryById(
  draft: MemoryDraft,
  namespaceId: string,
  id: string,
): Promise<MemoryRow | undefined> {
  const d = draft.drafted(id);
  if (d) return d.row.namespace_id === namespaceId ? { ...d.row } : undefined;
  const row = await stored.getMemoryRow(draft.db, namespaceId, id);
  return row ? draft.view(row) : undefined;
}

/** Those of `ids` whose subject is `subject`, in the order given. */
export async function memoriesAbout(
  draft: MemoryDraft,
  ids: readonly string[],
  subject: string,
): Promise<string[]> {
  const storedIds = ids.filter((id) => !draft.drafted(id));
  const about = new Set(await stored.memoriesAbout(draft.db, storedIds, subject));
  return ids.filter((id) => about.has(id) || draft.drafted(id)?.row.subject === subject);
}

/** memories.ts memoryTermFrequency: the committed index's counts. */
export async function memoryTermFrequency(
  draft: MemoryDraft,
  namespaceId: string,
  stems: readonly string[],
): Promise<number[]> {
  return await stored.memoryTermFrequency(draft.db, namespaceId, stems);
}

/** memories.ts insertMemory, into the draft: the new row (its rowid provisional); a parent is no longer latest. */
export async function insertMemory(draft: MemoryDraft, m: NewMemoryRow): Promise<MemoryRow> {
  const t = now();
  const id = newId("mem");
  const row: MemoryRow = {
    rowid: draft.provisionalRowid(),
    id,
    namespace_id: m.namespaceId,
    memory: m.memory,
    metadata: JSON.stringify(m.metadata),
    is_static: m.isStatic ? 1 : 0,
    is_inference: m.isInference ? 1 : 0,
    is_latest: 1,
    is_forgotten: 0,
    version: m.parent ? m.parent.version + 1 : 1,
    parent_memory_id: m.parent?.id ?? null,
    root_memory_id: m.parent ? (m.parent.root_memory_id ?? m.parent.id) : null,
    forget_after: m.forgetAfter,
    forget_reason: m.forgetReason ?? null,
    subject: m.subject,
    subject_kind: m.subjectKind ?? null,
    attribute: m.attribute,
    fact_value: m.value ?? null,
    polarity: m.polarity ?? "is",
    event_date: m.eventDate,
    document_id: m.documentId,
    speaker: m.speaker ?? null,
    created_at: t,
    updated_at: t,
  };
  draft.add({
    row,
    memoryKey: memoryKey(m.memory),
    context: m.context ?? "",
    vector: m.vector,
    sources: new Map(m.documentId === null ? [] : [[m.documentId, m.source]]),
  });
  if (m.parent) await retireMemory(draft, id, m.parent);
  return { ...row };
}

/** memories.ts retireMemory, into the draft: `old` is no longer latest, replaced by `newId`. */
export async function retireMemory(draft: MemoryDraft, newId: string, old: MemoryRow): Promise<void> {
  const d = draft.drafted(old.id);
  if (d) {
    d.row.is_latest = 0;
    d.row.updated_at = now();
  } else Object.assign(draft.change(old).set, { is_latest: 0, updated_at: now() });
  await addRelation(draft, newId, old.id, "updates");
}

/** memories.ts addRelation, into the draft (once each). */
export async function addRelation(
  draft: MemoryDraft,
  fromId: string,
  toId: string,
  relation: "updates" | "extends" | "derives",
): Promise<void> {
  if (!draft.relations.some(([f, t, r]) => f === fromId && t === toId && r === relation))
    draft.relations.push([fromId, toId, relation]);
}

/**
 * memories.ts mergeSource, into the draft: the memory gains the document as a source and its
 * latest one (with its metadata); its expiry as mergeSource decides it.
 */
export async function mergeSource(
  draft: MemoryDraft,
  existing: MemoryRow,
  documentId: string,
  metadata: Metadata,
  forgetAfter: string | null,
  span?: { start: number; end: number },
): Promise<void> {
  const d = draft.drafted(existing.id);
  // A drafted memory's sources are this draft's, all of one document.
  const onlyThisSource = d ? true : !(await stored.hasOtherSource(draft.db, existing.id, documentId));
  const set = {
    document_id: documentId,
    metadata: JSON.stringify(metadata),
    forget_after: stored.mergedExpiry(existing.forget_after, forgetAfter, onlyThisSource),
    updated_at: now(),
  };
  if (d) {
    Object.assign(d.row, set);
    d.sources.set(documentId, span);
  } else {
    const c = draft.change(existing);
    Object.assign(c.set, set);
    c.sources.set(documentId, span);
  }
}
