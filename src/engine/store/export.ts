/**
 * Rows of one organization's content, out to export records and back in (see engine/export.ts for
 * the file format). Rows keep their ids, versions, dates and vectors, so an imported data directory
 * answers the same searches; jobs, keys and connectors stay behind (they belong to a machine).
 */
import { type Db, now, parseJson, transaction } from "./db.js";
import { enqueueDocumentJob } from "./jobs.js";
import { ensureNamespace, type NamespaceRow } from "./namespaces.js";
import { ensureOrganization, type OrganizationRow } from "./organizations.js";

/** One line of an export: its kind, then the row's columns in camelCase. */
export type ExportRecord = { kind: ExportKind } & Record<string, unknown>;

export type ExportKind =
  | "organization"
  | "bucket"
  | "namespace"
  | "document"
  | "chunk"
  | "memory"
  | "memorySource"
  | "relation"
  | "forgottenSentence";

interface Table {
  table: string;
  /** Columns copied as they are (snake_case in the table, camelCase in the record). */
  columns: readonly string[];
  /** Columns holding JSON text: objects in the record. */
  json?: readonly string[];
  /** The vector table keyed by this table's rowid, when it has one. */
  vectors?: { table: string; key: string };
}

const TABLES = {
  document: {
    table: "documents",
    columns: [
      "id",
      "custom_id",
      "content",
      "content_hash",
      "text",
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
      "created_at",
      "updated_at",
    ],
    json: ["metadata", "filter_by_metadata"],
  },
  chunk: {
    table: "chunks",
    columns: [
      "id",
      "document_id",
      "position",
      "content",
      "type",
      "start_offset",
      "end_offset",
      "label",
      "speaker",
      "context",
      "created_at",
    ],
    vectors: { table: "chunk_vectors", key: "chunk_rowid" },
  },
  memory: {
    table: "memories",
    columns: [
      "id",
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
      "memory_key",
      "speaker",
      "context",
      "created_at",
      "updated_at",
    ],
    json: ["metadata"],
    vectors: { table: "memory_vectors", key: "memory_rowid" },
  },
  memorySource: {
    table: "memory_sources",
    columns: ["memory_id", "document_id", "start_offset", "end_offset", "created_at"],
  },
  relation: { table: "memory_relations", columns: ["from_id", "to_id", "relation", "created_at"] },
  // What the user forgot stays out of the chunks when an imported document is processed again.
  forgottenSentence: {
    table: "forgotten_sentences",
    columns: ["document_id", "memory_id", "sentence", "created_at"],
  },
} as const satisfies Partial<Record<ExportKind, Table>>;

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function toRecord(kind: ExportKind, t: Table, row: Record<string, unknown>): ExportRecord {
  const out: ExportRecord = { kind };
  for (const c of t.columns) {
    const v = row[c];
    out[camel(c)] = t.json?.includes(c) ? parseJson(v as string | null, null) : v;
  }
  if (t.vectors && row.vector_model != null) {
    out.vector = {
      model: row.vector_model,
      embedding: Buffer.from(row.vector_embedding as Uint8Array).toString("base64"),
    };
  }
  return out;
}

/** Rows read per statement: a namespace of any size is exported in bounded memory. */
const EXPORT_PAGE = 1_000;

/** A record of the export, handed on as it is read (the caller writes it out, with backpressure). */
export type EmitRecord = (record: ExportRecord) => Promise<void>;

/** The rows of `t` in one namespace, oldest first, each with its vector when it has one. */
async function rowsOf(
  db: Db,
  kind: keyof typeof TABLES,
  namespaceId: string,
  emit: EmitRecord,
): Promise<void> {
  const t: Table = TABLES[kind];
  const cols = t.columns.map((c) => `x.${c}`).join(", ");
  let sql: string;
  if (kind === "memorySource" || kind === "relation") {
    // Scoped through their memory: a relation's both ends are memories of the same namespace.
    const memoryColumn = kind === "memorySource" ? "memory_id" : "from_id";
    sql = `SELECT ${cols} FROM ${t.table} x JOIN memories m ON m.id = x.${memoryColumn}
           WHERE m.namespace_id = $1 ORDER BY m.rowid, x.created_at, x.rowid`;
  } else if (kind === "forgottenSentence") {
    sql = `SELECT ${cols} FROM ${t.table} x JOIN documents d ON d.id = x.document_id
           WHERE d.namespace_id = $1 ORDER BY x.document_id, x.memory_id, x.sentence`;
  } else if (t.vectors) {
    sql = `SELECT ${cols}, v.model AS vector_model, v.embedding AS vector_embedding FROM ${t.table} x
           LEFT JOIN ${t.vectors.table} v ON v.${t.vectors.key} = x.rowid
           WHERE x.namespace_id = $1 ORDER BY x.rowid`;
  } else {
    sql = `SELECT ${cols} FROM ${t.table} x WHERE x.namespace_id = $1 ORDER BY x.rowid`;
  }
  // Pages of one snapshot (the caller's read transaction): no row moves between them.
  const page = db.prepare(`${sql} LIMIT $2 OFFSET $3`);
  for (let offset = 0; ; offset += EXPORT_PAGE) {
    const rows = await page.all(namespaceId, EXPORT_PAGE, offset);
    for (const row of rows) await emit(toRecord(kind, t, row));
    if (rows.length < EXPORT_PAGE) return;
  }
}

/**
 * Every record of the organization's namespaces (or of `only`), in the order an import needs them:
 * the organization's context and buckets, then per namespace its record, buckets, documents,
 * chunks, memories, their sources and relations. Read in one transaction: a consistent snapshot.
 */
export async function exportRecords(
  db: Db,
  organization: string,
  only: string | undefined,
  emit: EmitRecord,
): Promise<void> {
  const org = await ensureOrganization(db, organization);
  await transaction(
    db,
    async () => {
      await emit({ kind: "organization", organizationalContext: org.organizational_context });
      const buckets = db.prepare(
        `SELECT name, description, created_at, updated_at FROM profile_buckets
         WHERE organization_id = $1 AND namespace_id IS NOT DISTINCT FROM $2 ORDER BY id`,
      );
      for (const b of await buckets.all(org.id, null)) await emit(bucketRecord(null, b));
      const namespaces = await db
        .prepare<NamespaceRow>(
          `SELECT * FROM namespaces WHERE organization_id = $1 ${only === undefined ? "" : "AND name = $2"} ORDER BY name`,
        )
        .all(...(only === undefined ? [org.id] : [org.id, only]));
      for (const ns of namespaces) {
        await emit({
          kind: "namespace",
          name: ns.name,
          supportingContext: ns.supporting_context,
          createdAt: ns.created_at,
          updatedAt: ns.updated_at,
        });
        for (const b of await buckets.all(org.id, ns.id)) await emit(bucketRecord(ns.name, b));
        for (const kind of [
          "document",
          "chunk",
          "memory",
          "memorySource",
          "relation",
          "forgottenSentence",
        ] as const) {
          await rowsOf(db, kind, ns.id, emit);
        }
      }
    },
    "read",
  );
}

function bucketRecord(namespace: string | null, b: Record<string, unknown>): ExportRecord {
  return {
    kind: "bucket",
    namespace,
    name: b.name,
    description: b.description,
    createdAt: b.created_at,
    updatedAt: b.updated_at,
  };
}

/** Why a record cannot be imported: the file's fault, named by its line. */
export class ImportRecordError extends Error {}

/** One record of an import, with the line of the file it was read from. */
export interface ImportLine {
  line: number;
  record: ExportRecord;
}

/**
 * Writes records into the organization (made if need be), all in one write transaction: an import
 * that fails midway leaves nothing behind; other writers wait for it. A namespace must be empty in
 * the target: records keep their ids, and an import never merges into content. A record that
 * cannot be written fails the import with ImportRecordError naming its line; an error `lines`
 * throws (a line that is not JSON) fails it as it is. Answers the records written per kind.
 */
export async function importRecords(
  db: Db,
  organization: string,
  lines: AsyncIterable<ImportLine>,
): Promise<Record<string, number>> {
  const writer = await ImportWriter.open(db, organization);
  await transaction(db, async () => {
    for await (const { line, record } of lines) {
      try {
        await writer.write(record);
      } catch (err) {
        throw new ImportRecordError(`line ${line} (${String(record.kind)}): ${(err as Error).message}`);
      }
    }
    await writer.finish();
  });
  return writer.counts;
}

/** Writes records into the organization, inside importRecords' transaction. */
class ImportWriter {
  private namespace: NamespaceRow | undefined;
  /** Documents still to be processed: their jobs are queued again at the end. */
  private readonly unfinished: { id: string; namespaceId: string; generation: number }[] = [];
  readonly counts: Record<string, number> = {};

  private constructor(
    private readonly db: Db,
    private readonly org: OrganizationRow,
  ) {}

  static async open(db: Db, organization: string): Promise<ImportWriter> {
    return new ImportWriter(db, await ensureOrganization(db, organization));
  }

  /** Queues the processing of the documents that were still processing where they were exported. */
  async finish(): Promise<void> {
    for (const d of this.unfinished)
      await enqueueDocumentJob(this.db, d.id, d.namespaceId, { generation: d.generation });
  }

  async write(r: ExportRecord): Promise<void> {
    this.counts[r.kind] = (this.counts[r.kind] ?? 0) + 1;
    switch (r.kind) {
      case "organization":
        // The target's own context wins when it has one: an import adds, it does not overwrite.
        await this.db
          .prepare(
            "UPDATE organizations SET organizational_context = COALESCE(organizational_context, $1), updated_at = $2 WHERE id = $3",
          )
          .run((r.organizationalContext as string | null) ?? null, now(), this.org.id);
        return;
      case "bucket": {
        const ns = r.namespace == null ? null : this.current(String(r.namespace)).id;
        await this.db
          .prepare(
            // The conflict target named (one partial unique index per kind of bucket): PostgreSQL
            // takes no DO UPDATE without one.
            `INSERT INTO profile_buckets (organization_id, namespace_id, name, description, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT ${ns === null ? "(organization_id, name) WHERE namespace_id IS NULL" : "(namespace_id, name) WHERE namespace_id IS NOT NULL"}
             DO UPDATE SET description = excluded.description, updated_at = excluded.updated_at`,
          )
          .run(
            this.org.id,
            ns,
            String(r.name),
            String(r.description),
            String(r.createdAt),
            String(r.updatedAt),
          );
        return;
      }
      case "namespace": {
        const name = String(r.name);
        const ns = await ensureNamespace(this.db, this.org.id, name);
        const used = (await this.db
          .prepare<{ n: number }>(
            "SELECT (SELECT count(*) FROM documents WHERE namespace_id = $1) + (SELECT count(*) FROM memories WHERE namespace_id = $2) AS n",
          )
          .get(ns.id, ns.id))!;
        if (used.n > 0) {
          throw new ImportRecordError(
            `namespace ${name} already has content here; import into an empty data directory, or delete that namespace first`,
          );
        }
        await this.db
          .prepare(
            "UPDATE namespaces SET supporting_context = $1, created_at = $2, updated_at = $3 WHERE id = $4",
          )
          .run(
            (r.supportingContext as string | null) ?? null,
            String(r.createdAt),
            String(r.updatedAt),
            ns.id,
          );
        this.namespace = { ...ns, name };
        return;
      }
      case "document":
      case "chunk":
      case "memory":
      case "memorySource":
      case "relation":
      case "forgottenSentence": {
        const t: Table = TABLES[r.kind];
        const ns = this.namespace;
        if (!ns) throw new ImportRecordError(`a ${r.kind} record comes before any namespace record`);
        const scoped = r.kind === "document" || r.kind === "chunk" || r.kind === "memory";
        const columns = [...t.columns, ...(scoped ? ["namespace_id"] : [])];
        const values = t.columns.map((c) => {
          const v = r[camel(c)];
          if (t.json?.includes(c)) return v == null ? (c === "metadata" ? "{}" : null) : JSON.stringify(v);
          // An export written before memories had a polarity: what they say is so.
          if (c === "polarity") return (v ?? "is") as string;
          return (v ?? null) as string | number | null;
        });
        if (scoped) values.push(ns.id);
        // The new row's key for its vector.
        const inserted = await this.db
          .prepare<{ rowid: number }>(
            `INSERT INTO ${t.table} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})
             ${t.vectors ? "RETURNING rowid" : ""}`,
          )
          .get(...values);
        const vector = r.vector as { model?: unknown; embedding?: unknown } | undefined;
        if (t.vectors && vector && typeof vector.model === "string" && typeof vector.embedding === "string") {
          await this.db
            .prepare(
              `INSERT INTO ${t.vectors.table} (${t.vectors.key}, model, embedding) VALUES ($1, $2, $3)`,
            )
            .run(inserted!.rowid, vector.model, Buffer.from(vector.embedding, "base64"));
        }
        if (r.kind === "document" && r.status !== "done" && r.status !== "failed") {
          this.unfinished.push({
            id: String(r.id),
            namespaceId: ns.id,
            generation: Number(r.generation) || 1,
          });
        }
        return;
      }
      default:
        throw new ImportRecordError(`unknown record kind ${JSON.stringify((r as { kind: unknown }).kind)}`);
    }
  }

  private current(name: string): NamespaceRow {
    if (this.namespace?.name !== name) {
      throw new ImportRecordError(`a bucket of namespace ${name} comes outside that namespace's records`);
    }
    return this.namespace;
  }
}
