import { z } from "zod";
import { MetadataRecord, QueryText, Timestamps } from "./common.js";
import { Filter } from "./filter.js";
import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, SEARCH_THRESHOLD_DEFAULT } from "./limits.js";
import { Memory } from "./memories.js";

export const SearchMode = z.enum(["hybrid", "memories", "chunks"]);
export type SearchMode = z.infer<typeof SearchMode>;

export const Rerank = z.preprocess(
  (v) => (v === true ? "order" : v === false ? "none" : v),
  z.enum(["none", "order", "aggregate"], { error: 'must be "none", "order" or "aggregate" (or a boolean)' }),
);

const SearchLimit = z
  .number({ error: "limit must be an integer" })
  .int("limit must be an integer")
  .min(1, "limit must be at least 1")
  .max(SEARCH_LIMIT_MAX, `limit must be at most ${SEARCH_LIMIT_MAX}`);

export const SearchBody = z.strictObject({
  query: QueryText("query"),
  searchMode: SearchMode.optional(),
  limit: SearchLimit.optional(),
  threshold: z
    .number()
    .min(0, "threshold must be between 0 and 1")
    .max(1, "threshold must be between 0 and 1")
    .optional(),
  filter: Filter.optional(),
  include: z
    .strictObject({
      documents: z.boolean().optional(),
      related: z.boolean().optional(),
      forgotten: z.boolean().optional(),
    })
    .optional(),
  rerank: Rerank.optional(),
  /** Offline: the query without the words that ask the memory ("remember", "told", "please"); see search/rewrite.ts. */
  rewriteQuery: z.boolean().optional(),
});
export type SearchBody = z.input<typeof SearchBody>;

/** The spec notes that some callers pass these in the query too; the body wins. */
export const SearchQuery = z.strictObject({
  searchMode: SearchMode.optional(),
  limit: z.coerce.number().pipe(SearchLimit).optional(),
});

export const SearchHit = z.looseObject({
  id: z.string(),
  memory: z.string().optional(),
  chunk: z.string().optional(),
  documentId: z.string().nullish(),
  similarity: z.number().min(0).max(1),
  metadata: MetadataRecord.nullish(),
  isLatest: z.boolean().optional(),
  isInference: z.boolean().optional(),
  /**
   * memctx's: a passage of a document still being processed, matched word for word in its stored
   * text (hybrid and chunks modes); its id is the document's and the passage's offset.
   */
  pending: z.boolean().optional(),
  /**
   * memctx's, on a memory hit of hybrid search: the chunk hits of these results whose passage holds
   * the memory's source sentence (a reader may show them as one result).
   */
  sourceChunkIds: z.array(z.string()).optional(),
  system: Timestamps.optional(),
  included: z
    .looseObject({
      document: z.looseObject({}).optional(),
      related: z
        .looseObject({
          parents: z.array(Memory),
          children: z.array(Memory),
          siblings: z.array(Memory).optional(),
        })
        .optional(),
    })
    .optional(),
});
export type SearchHit = z.infer<typeof SearchHit>;

export const SearchResponse = z.looseObject({
  results: z.array(SearchHit),
  /** Milliseconds. */
  searchTime: z.number(),
});
export type SearchResponse = z.infer<typeof SearchResponse>;

export const SEARCH_DEFAULTS = {
  searchMode: "hybrid",
  limit: SEARCH_LIMIT_DEFAULT,
  threshold: SEARCH_THRESHOLD_DEFAULT,
} as const;
