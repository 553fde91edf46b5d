/**
 * A v3/v4-era service as `memctx migrate`'s source: documents listed by `POST /v3/documents/list`
 * (container tags are the namespaces) and read by `GET /v3/documents/{id}` where a list leaves the
 * content out. Only what a migration reads of those answers is parsed; anything else they carry
 * is ignored.
 */
import { z } from "zod";
import { Metadata } from "../api/index.js";
import type { MigrationSource, SourceDocument, UnreadableDocument } from "./migrate.js";

/** Page size of the listing (the legacy list's own default is 10). */
const LEGACY_PAGE_SIZE = 100;

const LegacyDocument = z.looseObject({
  id: z.string(),
  customId: z.string().nullish(),
  content: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  containerTags: z.array(z.string()).nullish(),
  documentDate: z.string().nullish(),
  createdAt: z.string().nullish(),
});
type LegacyDocument = z.infer<typeof LegacyDocument>;

const LegacyList = z.looseObject({
  memories: z.array(LegacyDocument),
  pagination: z.looseObject({
    currentPage: z.number(),
    totalPages: z.number(),
    totalItems: z.number().optional(),
  }),
});

export class LegacySourceError extends Error {}

export interface LegacySourceOptions {
  baseUrl: string;
  apiKey: string;
  /** Injected for tests of a closed connection; default: the global fetch. */
  fetch?: typeof fetch;
}

export function legacySource(opts: LegacySourceOptions): MigrationSource {
  const doFetch = opts.fetch ?? fetch;
  const base = opts.baseUrl.replace(/\/+$/, "");

  async function call(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
    const res = await doFetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${opts.apiKey}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok)
      throw new LegacySourceError(`${method} ${path} answered ${res.status}: ${text.slice(0, 200)}`);
    try {
      return JSON.parse(text);
    } catch {
      throw new LegacySourceError(`${method} ${path} answered something that is not JSON`);
    }
  }

  async function list(page: number, containerTag: string | undefined) {
    const raw = await call("POST", "/v3/documents/list", {
      ...(containerTag === undefined ? {} : { containerTags: [containerTag] }),
      includeContent: true,
      limit: LEGACY_PAGE_SIZE,
      page,
      sort: "createdAt",
      order: "asc",
    });
    const parsed = LegacyList.safeParse(raw);
    if (!parsed.success) {
      throw new LegacySourceError(
        `POST /v3/documents/list answered an unexpected shape: ${parsed.error.message}`,
      );
    }
    return parsed.data;
  }

  async function* all(containerTag: string | undefined): AsyncGenerator<LegacyDocument> {
    for (let page = 1; ; page++) {
      const res = await list(page, containerTag);
      yield* res.memories;
      if (res.memories.length < LEGACY_PAGE_SIZE || page >= res.pagination.totalPages) return;
    }
  }

  async function toSource(d: LegacyDocument): Promise<SourceDocument | UnreadableDocument> {
    const key = d.customId ?? d.id;
    let content = d.content;
    if (!content) {
      const full = LegacyDocument.safeParse(await call("GET", `/v3/documents/${encodeURIComponent(d.id)}`));
      content = full.success ? full.data.content : null;
    }
    if (!content) return { key, reason: "the source holds no content for it" };
    const metadata = Metadata.safeParse(d.metadata ?? {});
    if (!metadata.success) {
      return { key, reason: "its metadata is not flat (string, number, boolean or string-array values)" };
    }
    return { key, content, metadata: metadata.data, date: d.documentDate ?? d.createdAt ?? undefined };
  }

  return {
    async *namespaces() {
      // The legacy API has no list of container tags: they are read off the documents.
      const seen = new Set<string>();
      for await (const d of all(undefined)) {
        for (const tag of d.containerTags ?? []) seen.add(tag);
      }
      yield* [...seen].sort();
    },
    async count(namespace) {
      return (await list(1, namespace)).pagination.totalItems;
    },
    async *documents(namespace) {
      for await (const d of all(namespace)) yield await toSource(d);
    },
    // v3 has no namespace context.
    supportingContext: async () => null,
  };
}
