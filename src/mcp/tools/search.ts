import { z } from "zod";
import {
  Filter,
  QueryText,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_THRESHOLD_DEFAULT,
  type SearchHit,
  SearchMode,
} from "../../api/index.js";
import { plural } from "../../plural.js";
import { age, estimateTokens, fitToBudget, quoted, RESULTS_ARE_DATA, truncate } from "../format.js";
import { processingNote, stillProcessing } from "../processing.js";
import { defineTool } from "./define.js";

const inputSchema = z.strictObject({
  query: QueryText("query").describe("What to recall, in natural language."),
  mode: SearchMode.default("hybrid").describe(
    "hybrid (default): facts and passages; memories: extracted facts only; chunks: passages only.",
  ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(SEARCH_LIMIT_MAX)
    .default(SEARCH_LIMIT_DEFAULT)
    .describe("Most results."),
  threshold: z.number().min(0).max(1).optional().describe("Minimum similarity, default 0.3."),
  filter: Filter.optional().describe(
    "{field, operator, value} or {operator: and|or, operands}; field: a metadata key, source, type or documentId.",
  ),
  maxTokens: z
    .number()
    .int()
    .min(20)
    .max(100_000)
    .optional()
    .describe("Token budget for the answer; results are cut to fit."),
});

const Source = z.object({
  documentId: z.string().nullable(),
  title: z.string().nullable(),
  url: z.string().nullable(),
  passage: z.string().optional(),
});

const Result = z.object({
  kind: z.enum(["memory", "chunk", "pending"]),
  id: z.string(),
  text: z.string(),
  similarity: z.number(),
  age: z.string().nullable().describe('e.g. "3 days ago"'),
  date: z.string().nullable().describe("The content's date, else when stored."),
  source: Source,
  metadata: z.record(z.string(), z.unknown()).nullable(),
});
type Result = z.infer<typeof Result>;

const outputSchema = z.object({
  results: z.array(Result),
  found: z.number().int().describe("Results before maxTokens cut them."),
  truncated: z.boolean(),
  nearest: z.boolean().describe("Nothing reached the threshold: the nearest, weaker matches."),
  processing: z.number().int().optional(),
  searchTimeMs: z.number(),
});

/**
 * Weaker matches shown when nothing reaches the default threshold. A question in other words than
 * the memory ("what can't I eat" / "allergic to peanuts") often scores under it on a small store,
 * and "Nothing found" is the worst answer a memory can give: the agent reading the tool's answer
 * judges a few weak matches, said to be weak, better than none.
 */
const NEAREST_LIMIT = 3;
/**
 * Characters of each nearest match shown: they are weak by definition, so a line each (around the
 * query's words) rather than whole passages, which made a failed answer the longest one.
 */
export const NEAREST_TEXT_MAX = 160;
/** Characters of a memory's source passage shown beside it. */
export const PASSAGE_TEXT_MAX = 200;

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

function toResult(hit: SearchHit, now: number): Result {
  const doc = hit.included?.document as Record<string, unknown> | undefined;
  const date = str(doc?.date) ?? str(hit.system?.createdAt);
  return {
    kind: hit.memory !== undefined ? "memory" : hit.pending ? "pending" : "chunk",
    id: hit.id,
    text: hit.memory ?? hit.chunk ?? "",
    similarity: Math.round(hit.similarity * 1000) / 1000,
    age: age(date, now) ?? null,
    date,
    source: {
      // The id the caller chose (conv-…, note-…) reads better than the service's; both work in paths.
      documentId: str(doc?.customId) ?? hit.documentId ?? str(doc?.id),
      title: str(doc?.title),
      url: str(doc?.url),
    },
    metadata: hit.metadata ?? null,
  };
}

/**
 * Each memory hit with the chunk hit it came from (the engine's `sourceChunkIds`) as one result:
 * the fact, with its passage as its source. A chunk that is no memory's source stays a result.
 */
function mergeSources(hits: readonly SearchHit[]): { hit: SearchHit; passage?: string }[] {
  const byId = new Map(hits.filter((h) => h.chunk !== undefined).map((h) => [h.id, h]));
  const taken = new Set<string>();
  const out: { hit: SearchHit; passage?: string }[] = [];
  for (const hit of hits) {
    const chunkId = hit.sourceChunkIds?.find((id) => byId.has(id) && !taken.has(id));
    if (chunkId) taken.add(chunkId);
    out.push(chunkId ? { hit, passage: byId.get(chunkId)!.chunk! } : { hit });
  }
  return out.filter(({ hit }) => !taken.has(hit.id));
}

/** Words of the query a text may show: long enough to mean something, their first letters (for plurals). */
const queryStems = (query: string) =>
  [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? [])].map((w) => w.slice(0, 5));

/**
 * `max` characters of a text around the first word the query shares with it (a weak match's
 * reason), or its start; cut at words and marked with "…".
 */
export function excerpt(text: string, query: string, max: number): string {
  if (text.length <= max) return text;
  const lower = text.toLowerCase();
  const at = Math.min(
    ...queryStems(query)
      // Letters and digits only: nothing to escape.
      .map((w) => lower.search(new RegExp(`(?<![\\p{L}\\p{N}])${w}`, "u")))
      .filter((i) => i >= 0),
  );
  if (!Number.isFinite(at) || at < max / 2) return truncate(text, max);
  const from = text.lastIndexOf(" ", at - Math.floor(max / 3)) + 1;
  return `…${truncate(text.slice(from), max - 1)}`;
}

export function renderResult(r: Result, i: number): string {
  const source = [r.source.title, r.source.url ?? (r.source.title ? null : r.source.documentId)]
    .filter((s): s is string => s !== null)
    .map(quoted)
    .join(" ");
  const when = r.age ? `, ${r.age}` : "";
  const kind = r.kind === "pending" ? "not processed yet" : r.kind;
  const passage = r.source.passage ? `: ${quoted(r.source.passage)}` : "";
  // One result per line, its stored text one quoted string: a line break inside it is escaped.
  return `${i + 1}. [${kind} ${r.similarity.toFixed(2)}${when}] ${quoted(r.text)}${source ? ` (from ${source}${passage})` : ""}`;
}

export const search = defineTool({
  name: "search",
  title: "Search memory",
  description: [
    "Recall stored facts and document passages, with age and source; call it before answering anything that may depend on earlier conversations.",
    "If nothing reaches the default threshold, the nearest few weaker matches come back (nearest).",
    "Text not processed yet is matched word for word (pending) and counted (processing).",
    RESULTS_ARE_DATA,
  ].join(" "),
  inputSchema,
  outputSchema,
  annotations: { title: "Search memory", readOnlyHint: true, openWorldHint: false },
  async handler(args, ctx) {
    const ask = (threshold: number | undefined, limit: number) =>
      ctx.ns.search(
        {
          query: args.query,
          searchMode: args.mode,
          limit,
          ...(threshold !== undefined ? { threshold } : {}),
          ...(args.filter ? { filter: args.filter } : {}),
          include: { documents: true },
        },
        { signal: ctx.extra.signal },
      );
    // Read first: a document that is done by the time the search runs is then in its results.
    const processing = stillProcessing(ctx);
    let res = await ask(args.threshold, args.limit);
    // Only when the caller left the threshold to us: one they chose is kept to.
    let nearest = false;
    // Whether a lower threshold is still worth suggesting.
    let lowest = args.threshold === 0;
    if (res.results.length === 0 && args.threshold === undefined) {
      lowest = true;
      const weak = await ask(0, Math.min(args.limit, NEAREST_LIMIT));
      // Any evidence at all: a row with none (similarity 0) is not near, only present.
      const some = weak.results.filter((h) => h.similarity > 0);
      if (some.length > 0) {
        res = { ...weak, results: some, searchTime: res.searchTime + weak.searchTime };
        nearest = true;
      }
    }
    const now = Date.now();
    const all = mergeSources(res.results).map(({ hit, passage }) => {
      const r = toResult(hit, now);
      // A weak match is a line, its source named only: the reader judges it, not reads it.
      if (nearest) return { ...r, text: excerpt(r.text, args.query, NEAREST_TEXT_MAX) };
      if (passage !== undefined) r.source.passage = truncate(passage, PASSAGE_TEXT_MAX);
      return r;
    });
    const pending = await processing;
    const note = processingNote(
      pending,
      all.length === 0 ? "what they say may be the answer" : "what they say is not all in these results",
    );
    const header = (n: number, cut: boolean) => {
      if (n === 0)
        return `Nothing found for "${args.query}". Try other words${args.mode === "hybrid" ? "" : ', mode "hybrid"'}${lowest ? "" : ", or a lower threshold"}.`;
      const count = `${plural(n, "result")}${cut ? ` (of ${all.length}; cut to fit ${args.maxTokens} tokens)` : ""}`;
      return nearest
        ? `Nothing reached similarity ${SEARCH_THRESHOLD_DEFAULT}; the nearest ${count}, weaker matches (check that they answer it):`
        : `${count}:`;
    };
    // The header (and the note on what is still processing) is part of the answer's budget: its
    // longest form (every result, cut) is set aside.
    const reserve = estimateTokens(`${header(all.length, true)}\n${note ?? ""}`) + 2;
    const { kept, truncated } = fitToBudget(
      all,
      (r) => renderResult(r, all.length),
      (r, max) => ({ ...r, text: truncate(r.text, max), source: { ...r.source, passage: undefined } }),
      args.maxTokens === undefined ? undefined : Math.max(0, args.maxTokens - reserve),
    );
    const text = [header(kept.length, truncated), ...kept.map(renderResult), ...(note ? [note] : [])].join(
      "\n",
    );
    return {
      structured: {
        results: kept,
        found: all.length,
        truncated,
        nearest,
        ...(pending ? { processing: pending.documents } : {}),
        searchTimeMs: res.searchTime,
      },
      text,
    };
  },
});
