import type { Metadata } from "../../api/common.js";
import { stemTexts } from "../text/terms.js";
import type { Db } from "./connection.js";
import { newId, now } from "./db.js";
import * as stored from "./memories.js";
import { M_ROW, type MemoryRow, memoryKey, type NewMemoryRow } from "./memories.js";
import {
  memoryTermCounts,
  type Posting,
  rankedUnits,
  type SearchSpace,
  textPostings,
} from "./search-index.js";
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
  /** What readAhead read of the namespace (PostgreSQL), or null. */
  ahead: ReadAhead | null = null;

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

  /**
   * Reads ahead, in a few statements, what drafting these facts will ask of the namespace's
   * memories (their texts', subjects' and slots' latest memories, their words' frequencies and the
   * postings of the rare ones), so that each fact's questions are answered here. Where statements
   * cross a wire (PostgreSQL) a fact asked some seven round trips; in process (SQLite) they cost
   * less than reading ahead, which is skipped. Only a hint: what it did not read is asked as before,
   * and what it read is the store's state as the draft began (no write of the namespace's memories
   * comes between, or the commit sends the draft back).
   */
  async readAhead(facts: readonly { memory: string; subject?: string | null; attribute?: string | null }[]) {
    if (!this.db.dialect.remote || facts.length === 0) return;
    // Subjects and slots as relation detection normalizes them (memory/relations.ts applyOne).
    const norm = (v: string | null | undefined) => v?.trim().toLowerCase() || null;
    const texts = facts.map((f) => f.memory.trim()).filter((t) => t !== "");
    const keys = [...new Set(texts.map(memoryKey))];
    const subjects = [...new Set(facts.map((f) => norm(f.subject)).filter((x) => x !== null))];
    const slots = [
      ...new Map(
        facts.flatMap((f) => {
          const [subject, attribute] = [norm(f.subject), norm(f.attribute)];
          return subject && attribute
            ? [[`${subject}\u0000${attribute}`, [subject, attribute]] as const]
            : [];
        }),
      ).values(),
    ];
    // The words' frequencies (their postings are read for the look-ups chosen by them: readAheadByText).
    const words = () => memoryTermCounts(this.db, this.namespaceId, stemTexts(texts).flat());
    /**
     * The latest rows (at most `limit`) of each tuple of `lists` (one list per column, read side by
     * side) in those columns, keyed by the tuple's values joined by NUL.
     */
    const latest = async (
      columns: readonly string[],
      lists: readonly (readonly string[])[],
      limit: number,
    ) => {
      const out = new Map<string, MemoryRow[]>();
      if (lists[0]!.length === 0) return out;
      const params = columns.map((_, i) => `CAST($${i + 2} AS text[])`).join(", ");
      const rows = await statement<MemoryRow & { k: number }>(
        this.db,
        `SELECT k.n AS k, x.* FROM unnest(${params}) WITH ORDINALITY AS k(${columns.join(", ")}, n)
         CROSS JOIN LATERAL (SELECT ${M_ROW} FROM memories m
           WHERE m.namespace_id = $1 AND ${columns.map((c) => `m.${c} = k.${c}`).join(" AND ")} AND m.is_latest = 1
           ORDER BY m.created_at DESC, m.rowid DESC LIMIT $${columns.length + 2}) x`,
      ).all(this.namespaceId, ...lists.map((l) => this.db.dialect.list(l)), limit);
      for (const { k, ...row } of rows) {
        const key = lists.map((l) => l[k - 1]!).join("\u0000");
        out.set(key, [...(out.get(key) ?? []), row]);
      }
      return out;
    };
    // Outside a transaction each statement has a connection of its own: the four reads go side by
    // side, in the time of the longest instead of one after another.
    const [ahead, byKey, bySubject, bySlot] = await Promise.all([
      words(),
      latest(["memory_key"], [keys], READ_AHEAD.key),
      latest(["subject"], [subjects], READ_AHEAD.subject),
      latest(["subject", "attribute"], [slots.map(([x]) => x), slots.map(([, y]) => y)], READ_AHEAD.slot),
    ]);
    this.ahead = { ...ahead, postings: new Map(), byKey, bySubject, bySlot, byUnit: new Map() };
  }

  /**
   * Reads ahead what looking memories up by words (latestByText) will ask for, given the lists of
   * stems it will look up by (chosen by the frequencies readAhead read): the stems' postings (those
   * of rare stems, within a bound), then the latest rows of each list's READ_AHEAD_WINDOWS first
   * windows of `limit` ranked units. Two statements; only a hint, as readAhead is.
   */
  async readAheadByText(lists: readonly (readonly string[])[], limit: number): Promise<void> {
    const ahead = this.ahead;
    if (!ahead?.space) return;
    const held = (x: string) => ahead.textUnits.get(x)!;
    // Only stems whose frequency readAhead read (a replaced value's words may be others).
    const wanted = [...new Set(lists.flat())]
      .filter((x) => ahead.textUnits.has(x) && !ahead.postings.has(x) && held(x) <= RARE_POSTINGS)
      .sort((a, b) => held(a) - held(b));
    const read: string[] = [];
    let total = 0;
    for (const x of wanted) {
      total += held(x);
      if (total <= READ_AHEAD_POSTINGS) read.push(x);
    }
    for (const x of read) ahead.postings.set(x, []);
    for (const p of await textPostings(this.db, ahead.space.id, read)) ahead.postings.get(p.term)?.push(p);
    const units = new Set<number>();
    for (const stems of lists) {
      const postings = postingsOf(ahead, stems);
      if (!postings) continue;
      for (const u of rankedUnits(postings).slice(0, READ_AHEAD_WINDOWS * limit))
        if (!ahead.byUnit.has(u)) units.add(u);
    }
    if (units.size === 0) return;
    const rows = await statement<MemoryRow>(
      this.db,
      `SELECT ${M_ROW} FROM memories m
       WHERE ${this.db.dialect.isIn("m.rowid", "$1", "bigint")} AND m.namespace_id = $2 AND m.is_latest = 1`,
    ).all(this.db.dialect.list([...units]), this.namespaceId);
    for (const u of units) ahead.byUnit.set(u, null);
    for (const r of rows) ahead.byUnit.set(Number(r.rowid), r);
  }

  /** Stored rows the draft retired: a read of latest rows asks the store for this many more. */
  get retiredStored(): number {
    let n = 0;
    for (const c of this.changed.values()) if (c.set.is_latest === 0) n++;
    return n;
  }
}

/** Words whose postings reading ahead may read: as rare as relation detection looks repeats up by. */
const RARE_POSTINGS = 500;
/** Postings reading ahead reads at most per draft, rarest words first. */
const READ_AHEAD_POSTINGS = 20_000;
/**
 * Latest memories read ahead per text, subject and slot: what relation detection asks (memories.ts
 * KEY_CANDIDATES and SLOT_CANDIDATES, relations.ts SUBJECT_CANDIDATES, 64) and some more, for
 * stored rows the draft retires meanwhile (a read asks for that many more).
 */
const READ_AHEAD = { key: stored.KEY_CANDIDATES + 16, subject: 64 + 16, slot: stored.SLOT_CANDIDATES + 16 };

/** Windows of ranked units per look-up by words whose rows readAheadByText reads. */
const READ_AHEAD_WINDOWS = 2;

/** The read-ahead postings of these stems, if it read every one's. */
function postingsOf(ahead: ReadAhead, stems: readonly string[]): Posting[] | undefined {
  return stems.every((x) => ahead.postings.has(x)) ? stems.flatMap((x) => ahead.postings.get(x)!) : undefined;
}

/** What MemoryDraft.readAhead read: the namespace's memory space, word frequencies, postings and latest rows. */
interface ReadAhead {
  space: SearchSpace | null;
  /** Units holding each stem in their own text. */
  textUnits: Map<string, number>;
  /** Own-text postings of the stems read (readAheadByText). */
  postings: Map<string, Posting[]>;
  byKey: Map<string, MemoryRow[]>;
  bySubject: Map<string, MemoryRow[]>;
  bySlot: Map<string, MemoryRow[]>;
  /** Rows by unit (rowid) as readAheadByText read them: the latest row of the namespace, or null. */
  byUnit: Map<number, MemoryRow | null>;
}

/**
 * The first `needed` stored rows of a list read ahead with `fetched` rows at most: what the store
 * would answer now, or undefined when the list read ahead is too short to tell.
 */
function firstRead(rows: MemoryRow[] | undefined, fetched: number, needed: number): MemoryRow[] | undefined {
  if (rows === undefined) return undefined;
  if (needed <= fetched || rows.length < fetched) return rows.slice(0, needed);
  return undefined;
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
async function memoryVersion(db: Db, namespaceId: string): Promise<number> {
  const row = await statement<{ version: number }>(
    db,
    "SELECT version FROM memory_versions WHERE namespace_id = $1",
  ).get(namespaceId);
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
  const needed = limit + draft.retiredStored;
  const rows =
    (namespaceId === draft.namespaceId
      ? firstRead(draft.ahead?.byKey.get(key) ?? (draft.ahead ? [] : undefined), READ_AHEAD.key, needed)
      : undefined) ?? (await stored.latestByKey(draft.db, namespaceId, text, needed));
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
  const needed = limit + draft.retiredStored;
  const ahead = draft.ahead && namespaceId === draft.namespaceId ? draft.ahead : null;
  const rows =
    (ahead
      ? firstRead(ahead.bySlot.get(`${subject}\u0000${attribute}`) ?? [], READ_AHEAD.slot, needed)
      : undefined) ??
    (await stored.latestBySubjectAttribute(draft.db, namespaceId, subject, attribute, needed));
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
  const needed = limit + draft.retiredStored;
  const ahead = draft.ahead && namespaceId === draft.namespaceId ? draft.ahead : null;
  const rows =
    (ahead ? firstRead(ahead.bySubject.get(subject) ?? [], READ_AHEAD.subject, needed) : undefined) ??
    (await stored.latestBySubject(draft.db, namespaceId, subject, needed));
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
  const ahead = draft.ahead && namespaceId === draft.namespaceId ? draft.ahead : null;
  const rows = await stored.latestByText(
    draft.db,
    namespaceId,
    stems,
    limit + draft.retiredStored,
    ahead
      ? {
          space: ahead.space,
          postings: (asked) => postingsOf(ahead, asked),
          rows: (window) =>
            window.every((u) => ahead.byUnit.has(u))
              ? window.flatMap((u) => ahead.byUnit.get(u) ?? [])
              : undefined,
        }
      : undefined,
  );
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
  const ahead = draft.ahead && namespaceId === draft.namespaceId ? draft.ahead : null;
  if (ahead && (ahead.space === null || stems.every((x) => ahead.textUnits.has(x))))
    return stems.map((x) => ahead.textUnits.get(x) ?? 0);
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

/**
 * Marks `old` no longer latest, replaced by the memory `newId` (its `updates` relation) without
 * making it that memory's parent: a new value retires every value its one-valued slot held.
 */
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
