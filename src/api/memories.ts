import { z } from "zod";
import { includeList, MetadataRecord, QueryText, queryInt, Timestamps } from "./common.js";
import {
  FORGET_MEMORY_IDS_MAX,
  FORGET_MEMORY_IDS_MIN,
  RELATED_LIMIT_DEFAULT,
  RELATED_LIMIT_MAX,
} from "./limits.js";

/** `{id, memory}`: how related memories, profile facts and forget matches are shown. */
export const MemoryRef = z.looseObject({ id: z.string(), memory: z.string() });
export type MemoryRef = z.infer<typeof MemoryRef>;

export const Relation = z.enum(["updates", "extends", "derives"]);
export type Relation = z.infer<typeof Relation>;

export type Memory = {
  id: string;
  memory: string;
  metadata?: Record<string, unknown> | null;
  isStatic?: boolean;
  isInference?: boolean;
  isLatest?: boolean;
  isForgotten?: boolean;
  version?: number;
  parentMemoryId?: string | null;
  rootMemoryId?: string | null;
  forgetAfter?: string | null;
  forgetReason?: string | null;
  documentId?: string | null;
  similarity?: number;
  system?: { createdAt: string; updatedAt: string; [k: string]: unknown };
  included?: {
    related?: { parents: Memory[]; children: Memory[]; siblings?: Memory[] };
    document?: Record<string, unknown>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
};

/** A memory's own fields, without what `include` adds (its relations): what lists show. */
const memoryFields = {
  id: z.string(),
  memory: z.string(),
  metadata: MetadataRecord.nullish(),
  isStatic: z.boolean().optional(),
  isInference: z.boolean().optional(),
  isLatest: z.boolean().optional(),
  isForgotten: z.boolean().optional(),
  version: z.number().int().optional(),
  parentMemoryId: z.string().nullish(),
  rootMemoryId: z.string().nullish(),
  forgetAfter: z.string().nullish(),
  forgetReason: z.string().nullish(),
  documentId: z.string().nullish(),
  similarity: z.number().optional(),
  system: Timestamps.optional(),
};
export const MemoryFields = z.looseObject(memoryFields);

export const Memory: z.ZodType<Memory> = z.looseObject({
  ...memoryFields,
  get included() {
    return z
      .looseObject({
        related: z
          .looseObject({
            parents: z.array(Memory),
            children: z.array(Memory),
            siblings: z.array(Memory).optional(),
          })
          .optional(),
        document: z.looseObject({}).optional(),
      })
      .optional();
  },
}) as z.ZodType<Memory>;

// ---------- GET /ns/{namespace}/memories/{id} ----------

export const GetMemoryQuery = z.strictObject({
  include: includeList(["related", "documents"] as const),
  relatedLimit: queryInt("relatedLimit", 1, RELATED_LIMIT_MAX, RELATED_LIMIT_DEFAULT).optional(),
});
export type GetMemoryQuery = z.input<typeof GetMemoryQuery>;

// ---------- DELETE /ns/{namespace}/memories and /memories/semantic ----------

export const ForgetMemoriesBody = z.strictObject({
  ids: z
    .array(z.string().min(1))
    .min(FORGET_MEMORY_IDS_MIN, `ids needs at least ${FORGET_MEMORY_IDS_MIN} id`)
    .max(FORGET_MEMORY_IDS_MAX, `ids takes at most ${FORGET_MEMORY_IDS_MAX} ids`),
});
export type ForgetMemoriesBody = z.input<typeof ForgetMemoriesBody>;

export const ForgetSemanticBody = z.strictObject({
  query: QueryText("query"),
  dryRun: z.boolean().optional(),
});
export type ForgetSemanticBody = z.input<typeof ForgetSemanticBody>;

export const ForgetResponse = z.looseObject({
  count: z.number().int(),
  matches: z.array(MemoryRef),
  errors: z.array(z.looseObject({ id: z.string(), error: z.string() })),
});
export type ForgetResponse = z.infer<typeof ForgetResponse>;
