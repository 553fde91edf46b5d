import { z } from "zod";
import {
  Chunk,
  Document,
  Filter,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  ListOrder,
  ListType,
  type Memory,
  MemoryFields,
  Pagination,
} from "../../api/index.js";
import { age, quoted, RESULTS_ARE_DATA, truncate } from "../format.js";
import { processingNote, stillProcessing } from "../processing.js";
import { defineTool } from "./define.js";

const inputSchema = z.strictObject({
  type: ListType.default("documents").describe("default documents"),
  page: z.number().int().min(1).default(1).describe("From 1; next while < totalPages."),
  limit: z.number().int().min(1).max(LIST_LIMIT_MAX).default(LIST_LIMIT_DEFAULT).describe("Items per page."),
  order: ListOrder.default("desc").describe("desc: newest first."),
  includeForgotten: z.boolean().default(false).describe("memories: also forgotten ones."),
  filter: Filter.optional().describe("Metadata filter, as in search."),
  id: z.string().min(1).optional().describe("A memory id: read it with its versions."),
});

/** A document without its full text: lists stay small; read a document's passages with search. */
const DocumentSummary = Document.omit({ content: true, chunks: true, memories: true });

// The output schema names the fields a model acts on (every item is a loose object: the rest still
// comes along), so that every turn does not pay for the whole contract.
const outputSchema = z.object({
  type: ListType,
  documents: z
    .array(
      DocumentSummary.pick({ id: true, title: true, url: true, type: true, date: true }).extend({
        // Strings, not the enums: the text shows the values, and tools/list stays small.
        system: z.object({ status: z.string(), dreamingStatus: z.string() }),
      }),
    )
    .optional(),
  memories: z
    .array(MemoryFields.pick({ id: true, memory: true, isStatic: true, isForgotten: true, documentId: true }))
    .optional(),
  chunks: z.array(Chunk.pick({ id: true, documentId: true, position: true, content: true })).optional(),
  pagination: Pagination,
  processing: z.number().int().optional(),
});

const when = (iso: string | undefined) => (iso ? ` (${age(iso)})` : "");

export const list = defineTool({
  name: "list",
  title: "List memory contents",
  description: [
    "Browse documents (with processing status), memories or chunks, a page at a time, newest first, or one memory's versions (id):",
    "to see what exists or find ids for forget; processing counts documents not processed yet.",
    RESULTS_ARE_DATA,
  ].join(" "),
  inputSchema,
  outputSchema,
  annotations: { title: "List memory contents", readOnlyHint: true, openWorldHint: false },
  async handler(args, ctx) {
    if (args.id !== undefined) {
      const m = await ctx.ns.memories.get(args.id, { include: ["related"] }, { signal: ctx.extra.signal });
      const related = m.included?.related;
      const section = (title: string, ms: Memory[] | undefined) =>
        ms?.length
          ? [`${title}:`, ...ms.map((r) => `- ${r.id} (v${r.version ?? 1}): ${quoted(r.memory)}`)]
          : [];
      return {
        structured: {
          type: "memories" as const,
          memories: [m],
          pagination: { currentPage: 1, totalPages: 1 },
        },
        text: [
          `${m.id} (version ${m.version ?? 1}${m.isForgotten ? ", forgotten" : ""}${m.isLatest === false ? ", superseded" : ""}): ${quoted(m.memory)}${when(m.system?.createdAt)}`,
          ...section("Earlier versions", related?.parents),
          ...section("Newer versions", related?.children),
          ...section("Related", related?.siblings),
        ].join("\n"),
      };
    }
    const query = { page: args.page, limit: args.limit, order: args.order };
    const body = {
      ...(args.filter ? { filter: args.filter } : {}),
      ...(args.type === "memories" && args.includeForgotten ? { include: { forgotten: true } } : {}),
    };
    const opts = { signal: ctx.extra.signal };
    // Read first: a document done by the time the list is read is then in it.
    const processing = stillProcessing(ctx);
    const res =
      args.type === "documents"
        ? await ctx.ns.documents.list(query, body, opts)
        : args.type === "memories"
          ? await ctx.ns.memories.list(query, body, opts)
          : await ctx.ns.chunks.list(query, body, opts);
    const { pagination } = res;
    let lines: string[];
    let structured: z.input<typeof outputSchema>;
    if (args.type === "documents") {
      const documents = res.documents.map(({ content: _c, chunks: _k, memories: _m, ...d }) => d);
      structured = { type: "documents", documents, pagination };
      lines = documents.map(
        (d) =>
          `- ${d.id}: ${quoted(d.title ?? d.url ?? d.type)} [${d.system.status}, memories ${d.system.dreamingStatus}]${when(d.system.createdAt)}`,
      );
    } else if (args.type === "memories") {
      structured = { type: "memories", memories: res.memories, pagination };
      lines = res.memories.map(
        (m) =>
          `- ${m.id}: ${quoted(m.memory)}${m.isForgotten ? " [forgotten]" : ""}${when(m.system?.createdAt)}`,
      );
    } else {
      structured = { type: "chunks", chunks: res.chunks, pagination };
      lines = res.chunks.map(
        (c) => `- ${c.id} (document ${c.documentId} #${c.position}): ${quoted(truncate(c.content, 200))}`,
      );
    }
    const header = `${args.type}, page ${pagination.currentPage} of ${pagination.totalPages}${lines.length ? ":" : ": none"}`;
    const pending = await processing;
    const note = processingNote(
      pending,
      args.type === "documents"
        ? "their memories are not all made yet"
        : `their ${args.type} are not all listed yet`,
    );
    if (pending) structured.processing = pending.documents;
    return { structured, text: [header, ...lines, ...(note ? [note] : [])].join("\n") };
  },
});
