/**
 * `memctx migrate`'s work: copies the documents of one namespace (or all) from a source to a
 * target, where the target is any v5 API (a `memctx serve`, the hosted service, or the embedded
 * engine through its in-process handler) and the source is a v5 API or a v3/v4-era one
 * (legacy-source.ts). Documents keep their ids (as the target's caller-defined `id`), content,
 * metadata and date; the target processes them again. What the target already holds with the
 * same content is skipped, so a run that was stopped is resumed by running it again.
 * Only the client is used here: this file never reaches into an engine.
 */
import type { Metadata } from "../api/index.js";
import { LIST_LIMIT_MAX } from "../api/limits.js";
import type { MemoryClient } from "../client/index.js";

/** One document as the source holds it, in what a target's add takes. */
export interface SourceDocument {
  /** The source's caller-defined id, else its own id: the target's `id`, so a re-run upserts. */
  key: string;
  content: string;
  metadata: Metadata;
  /** When the content is from: the source's document date, else when the source stored it. */
  date: string | undefined;
}

/** A document the source lists but cannot hand over (no content, say). */
export interface UnreadableDocument {
  key: string;
  reason: string;
}

export interface MigrationSource {
  /** Every namespace that holds documents, in a stable order. */
  namespaces(): AsyncIterable<string>;
  /** How many documents the namespace holds, when the source says (for the progress line). */
  count(namespace: string): Promise<number | undefined>;
  documents(namespace: string): AsyncIterable<SourceDocument | UnreadableDocument>;
  /** The namespace's supporting context, where the source has one. */
  supportingContext(namespace: string): Promise<string | null>;
}

export interface MigrationCounts {
  namespaces: number;
  copied: number;
  skipped: number;
  failed: number;
  /** Why the migration stopped before the end (the target's document token limit), if it did. */
  stopped?: string;
}

/** The target's answer when its organization's document token quota is reached: every later add would fail too. */
const PAYMENT_REQUIRED = 402;
const NOT_FOUND = 404;

export interface Progress {
  namespace: string;
  /** Documents of this namespace dealt with so far (copied, skipped or failed), and how many it holds (when known). */
  done: number;
  total: number | undefined;
  /** The namespace is finished. */
  finished: boolean;
  counts: MigrationCounts;
}

export interface MigrateOptions {
  source: MigrationSource;
  /** Null: a target that holds nothing yet (a dry run into a data directory not made yet). */
  target: MemoryClient | null;
  /** Only these namespaces (default: every namespace of the source). */
  namespaces?: string[];
  /** With one namespace: its name on the target (default: the same). */
  targetNamespace?: string;
  /** Count what would be copied and skipped; write nothing. */
  dryRun?: boolean;
  /** Adds in flight at once. */
  concurrency?: number;
  onProgress?(p: Progress): void;
  /** One line per document that could not be copied. */
  onFailure?(namespace: string, key: string, reason: string): void;
}

export const MIGRATE_CONCURRENCY_DEFAULT = 4;

/** Content of the documents the target's namespace already holds, by their caller-defined id (else id). */
async function targetContents(target: MemoryClient, namespace: string): Promise<Map<string, string | null>> {
  const held = new Map<string, string | null>();
  const ns = target.ns(namespace);
  for (let page = 1; ; page++) {
    const res = await ns.documents
      .list({ page, limit: LIST_LIMIT_MAX, sort: "createdAt", order: "asc" })
      // A service that answers 404 for a namespace never written to holds nothing of it yet.
      .catch((err: unknown) => {
        if ((err as { status?: unknown }).status === NOT_FOUND) return null;
        throw err;
      });
    if (!res) return held;
    for (const d of res.documents) held.set(d.customId ?? d.id, d.content ?? null);
    if (res.documents.length < LIST_LIMIT_MAX || page >= res.pagination.totalPages) return held;
  }
}

const isUnreadable = (d: SourceDocument | UnreadableDocument): d is UnreadableDocument => "reason" in d;

/** Copies the namespaces; resolves with what it did. Failures of single documents are counted, not thrown. */
export async function migrate(opts: MigrateOptions): Promise<MigrationCounts> {
  const counts: MigrationCounts = { namespaces: 0, copied: 0, skipped: 0, failed: 0 };
  const names: string[] = [];
  if (opts.namespaces?.length) names.push(...opts.namespaces);
  else for await (const ns of opts.source.namespaces()) names.push(ns);
  const concurrency = Math.max(1, opts.concurrency ?? MIGRATE_CONCURRENCY_DEFAULT);

  for (const from of names) {
    const to = opts.targetNamespace ?? from;
    counts.namespaces++;
    const total = await opts.source.count(from);
    const held = opts.target ? await targetContents(opts.target, to) : new Map<string, string | null>();
    const ns = opts.target?.ns(to);
    const before = counts.copied + counts.skipped + counts.failed;
    const report = (finished = false) =>
      opts.onProgress?.({
        namespace: from,
        done: counts.copied + counts.skipped + counts.failed - before,
        total,
        finished,
        counts: { ...counts },
      });
    const fail = (key: string, reason: string) => {
      counts.failed++;
      opts.onFailure?.(from, key, reason);
    };
    const inFlight = new Set<Promise<void>>();
    for await (const doc of opts.source.documents(from)) {
      if (counts.stopped) break;
      if (isUnreadable(doc)) {
        fail(doc.key, doc.reason);
      } else if (held.has(doc.key) && held.get(doc.key) === doc.content) {
        counts.skipped++;
      } else if (opts.dryRun || !ns) {
        counts.copied++;
      } else {
        const add = ns.documents
          .add({
            id: doc.key,
            content: doc.content,
            metadata: doc.metadata,
            ...(doc.date ? { date: doc.date } : {}),
          })
          .then(
            () => {
              counts.copied++;
            },
            (err: unknown) => {
              if ((err as { status?: unknown }).status === PAYMENT_REQUIRED) {
                counts.stopped ??= `the target answered ${PAYMENT_REQUIRED}: ${(err as Error).message}`;
              }
              fail(doc.key, err instanceof Error ? err.message : String(err));
            },
          )
          .finally(() => {
            inFlight.delete(add);
            report();
          });
        inFlight.add(add);
        if (inFlight.size >= concurrency) await Promise.race(inFlight);
        continue;
      }
      report();
    }
    await Promise.all(inFlight);
    if (counts.stopped) {
      report(true);
      return counts;
    }
    if (!opts.dryRun && opts.target) {
      const context = await opts.source.supportingContext(from);
      if (context) {
        await copySupportingContext(opts.target, to, context).catch((err: unknown) => {
          fail("(supportingContext)", err instanceof Error ? err.message : String(err));
        });
      }
    }
    report(true);
  }
  return counts;
}

/** The namespace's supporting context travels too, unless the target's namespace has its own. */
async function copySupportingContext(target: MemoryClient, namespace: string, context: string) {
  const ns = target.ns(namespace);
  const current = await ns.get().catch(() => null);
  if (current?.supportingContext) return;
  await ns.update({ supportingContext: context });
}

/** A v5 API as a source: `GET /namespaces`, `POST /ns/{ns}/list/documents`, and a read where a list omits content. */
export function v5Source(client: MemoryClient): MigrationSource {
  return {
    async *namespaces() {
      for (let page = 1; ; page++) {
        const res = await client.namespaces.list({ page, limit: LIST_LIMIT_MAX });
        for (const n of res.namespaces) if (n.documentCount > 0) yield n.namespace;
        const pages = res.pagination?.totalPages ?? page;
        if (res.namespaces.length < LIST_LIMIT_MAX || page >= pages) return;
      }
    },
    async count(namespace) {
      const res = await client.ns(namespace).documents.list({ page: 1, limit: 1 });
      return res.pagination.totalItems;
    },
    async *documents(namespace) {
      const ns = client.ns(namespace);
      // Oldest first: a document added meanwhile lands on a later page, never shifts one already read.
      for (let page = 1; ; page++) {
        const res = await ns.documents.list({ page, limit: LIST_LIMIT_MAX, sort: "createdAt", order: "asc" });
        for (const d of res.documents) {
          const key = d.customId ?? d.id;
          const content = d.content ?? (await ns.documents.get(d.id)).content;
          if (!content) {
            yield { key, reason: "the source holds no content for it" };
            continue;
          }
          yield { key, content, metadata: d.metadata, date: d.date ?? d.system.createdAt };
        }
        if (res.documents.length < LIST_LIMIT_MAX || page >= res.pagination.totalPages) return;
      }
    },
    async supportingContext(namespace) {
      const rec = await client
        .ns(namespace)
        .get()
        .catch(() => null);
      return rec?.supportingContext ?? null;
    },
  };
}
