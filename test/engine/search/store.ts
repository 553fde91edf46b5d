import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Metadata } from "../../../src/api/common.js";
import type { Embedder } from "../../../src/engine/models/embedder.js";
import { type Db, newId, openDatabase, transaction } from "../../../src/engine/store/db.js";
import { ensureNamespace } from "../../../src/engine/store/namespaces.js";
import { ensureOrganization } from "../../../src/engine/store/organizations.js";
import { testDatabase } from "../../support/harness.js";

/** A real store in a temp dir, with rows written straight through SQL to test search alone. */
export class TestStore {
  private constructor(
    readonly dir: string,
    readonly db: Db,
    readonly organizationId: string,
  ) {}

  static async open(): Promise<TestStore> {
    const dir = mkdtempSync(join(tmpdir(), "memctx-search-"));
    const db = await openDatabase(dir, testDatabase());
    return new TestStore(dir, db, (await ensureOrganization(db, "test")).id);
  }

  async namespace(name: string): Promise<string> {
    return (await ensureNamespace(this.db, this.organizationId, name)).id;
  }

  /**
   * A document with one chunk per text; `status` other than done hides its chunks from search. In a
   * transaction, as the store writes: its commit indexes the chunks (a search only reads).
   */
  async document(...args: Parameters<TestStore["writeDocument"]>): ReturnType<TestStore["writeDocument"]> {
    return await transaction(this.db, () => this.writeDocument(...args));
  }

  private async writeDocument(
    namespaceId: string,
    chunks: string[],
    opts: {
      metadata?: Metadata;
      status?: string;
      source?: string;
      type?: string;
      customId?: string;
      title?: string;
      date?: string;
      embedder?: { model: string; vectors: Float32Array[] };
      /** The chunks' label (`[8 May 2023]`), speakers (lowercased roles) and contexts, by position. */
      label?: string;
      speakers?: (string | null)[];
      contexts?: string[];
    } = {},
  ): Promise<{ id: string; chunkIds: string[] }> {
    const id = newId("doc");
    const t = new Date().toISOString();
    const text = chunks.join("\n");
    await this.db
      .prepare(
        `INSERT INTO documents (id, namespace_id, custom_id, content, content_hash, text, title, type, source, metadata,
           document_date, status, dreaming_status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'done', $13, $14)`,
      )
      .run(
        id,
        namespaceId,
        opts.customId ?? null,
        text,
        id,
        text,
        opts.title ?? null,
        opts.type ?? "text",
        opts.source ?? "api",
        JSON.stringify(opts.metadata ?? {}),
        opts.date ?? null,
        opts.status ?? "done",
        t,
        t,
      );
    const chunkIds: string[] = [];
    let offset = 0;
    for (const [position, content] of chunks.entries()) {
      const chunkId = newId("chk");
      const row = (await this.db
        .prepare(
          `INSERT INTO chunks (id, document_id, namespace_id, position, content, type, start_offset, end_offset,
             label, speaker, context, created_at)
           VALUES ($1, $2, $3, $4, $5, 'text', $6, $7, $8, $9, $10, $11) RETURNING rowid`,
        )
        .get(
          chunkId,
          id,
          namespaceId,
          position,
          content,
          offset,
          offset + content.length,
          opts.label ?? null,
          opts.speakers?.[position] ?? null,
          opts.contexts?.[position] ?? "",
          t,
        )) as {
        rowid: number;
      };
      offset += content.length + 1;
      const v = opts.embedder?.vectors[position];
      if (v) {
        await this.db
          .prepare("INSERT INTO chunk_vectors (chunk_rowid, model, embedding) VALUES ($1, $2, $3)")
          .run(row.rowid, opts.embedder!.model, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
      }
      chunkIds.push(chunkId);
    }
    return { id, chunkIds };
  }

  /** A memory, in a transaction as the store writes (its commit indexes it). */
  async memory(...args: Parameters<TestStore["writeMemory"]>): ReturnType<TestStore["writeMemory"]> {
    return await transaction(this.db, () => this.writeMemory(...args));
  }

  private async writeMemory(
    namespaceId: string,
    memory: string,
    opts: {
      metadata?: Metadata;
      isLatest?: boolean;
      isForgotten?: boolean;
      isInference?: boolean;
      forgetAfter?: string;
      parentMemoryId?: string;
      documentId?: string;
      version?: number;
      context?: string;
      speaker?: string;
      /** Where in its document's text it was said (a memory_sources row). */
      sourceStart?: number;
      /** YYYY-MM-DD the fact is about. */
      eventDate?: string;
    } = {},
  ): Promise<string> {
    const id = newId("mem");
    const t = new Date().toISOString();
    await this.db
      .prepare(
        `INSERT INTO memories (id, namespace_id, memory, metadata, is_inference, is_latest, is_forgotten, version,
           parent_memory_id, forget_after, document_id, context, speaker, event_date, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      )
      .run(
        id,
        namespaceId,
        memory,
        JSON.stringify(opts.metadata ?? {}),
        opts.isInference ? 1 : 0,
        opts.isLatest === false ? 0 : 1,
        opts.isForgotten ? 1 : 0,
        opts.version ?? 1,
        opts.parentMemoryId ?? null,
        opts.forgetAfter ?? null,
        opts.documentId ?? null,
        opts.context ?? "",
        opts.speaker ?? null,
        opts.eventDate ?? null,
        t,
        t,
      );
    if (opts.documentId && opts.sourceStart !== undefined) {
      await this.db
        .prepare(
          "INSERT INTO memory_sources (memory_id, document_id, start_offset, end_offset, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .run(id, opts.documentId, opts.sourceStart, opts.sourceStart + 1, t);
    }
    return id;
  }

  async relate(fromId: string, toId: string, relation: "updates" | "extends" | "derives"): Promise<void> {
    await this.db
      .prepare("INSERT INTO memory_relations (from_id, to_id, relation, created_at) VALUES ($1, $2, $3, $4)")
      .run(fromId, toId, relation, new Date().toISOString());
  }

  async close(): Promise<void> {
    await this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A deterministic embedder for tests: words are mapped to concepts (so "car" and "automobile" share
 * one) and the concepts hashed into 64 dimensions, bag-of-words. A real implementation of the
 * Embedder interface, with a tiny built-in synonym table instead of a learned model.
 */
export class ConceptEmbedder implements Embedder {
  readonly model = "test-concepts-64";
  readonly dimensions = 64;
  static readonly SYNONYMS: Record<string, string> = {
    automobile: "car",
    // A word no dictionary knows: only the embedder relates it to "car".
    zorbmobile: "car",
    vehicle: "car",
    sedan: "car",
    physician: "doctor",
    medic: "doctor",
    canine: "dog",
    puppy: "dog",
  };

  embedSync(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
      const word = ConceptEmbedder.SYNONYMS[raw] ?? raw;
      let h = 2166136261;
      for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
      v[(h >>> 0) % this.dimensions]! += 1;
    }
    return v;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedSync(t));
  }
}
