import { z } from "zod";
import {
  DELETE_DOCUMENT_IDS_MAX,
  FORGET_MEMORY_IDS_MAX,
  ItemError,
  MemoryRef,
  QueryText,
} from "../../api/index.js";
import { plural } from "../../plural.js";
import { quoted, RESULTS_ARE_DATA } from "../format.js";
import { processingNote, stillProcessing } from "../processing.js";
import { defineTool, type ToolContext } from "./define.js";

const inputSchema = z.strictObject({
  ids: z
    .array(z.string().min(1))
    .min(1)
    .max(FORGET_MEMORY_IDS_MAX)
    .optional()
    .describe("Memory ids (from search, list or forget by query)."),
  query: QueryText("query").optional().describe("Forget by meaning, once the matches are confirmed."),
  documentIds: z
    .array(z.string().min(1))
    .min(1)
    .max(DELETE_DOCUMENT_IDS_MAX)
    .optional()
    .describe("Delete whole documents (ids from list) and the memories only they gave."),
});

const outputSchema = z.object({
  forgotten: z.number().int().describe("Memories (or, with documentIds, documents) removed."),
  matches: z.array(MemoryRef),
  errors: z.array(ItemError),
  needsConfirmation: z
    .boolean()
    .describe("Nothing forgotten yet: confirm with the user, then call with ids."),
  processing: z.number().int().optional(),
});

const list = (matches: { id: string; memory: string }[]) =>
  matches.map((m) => `- ${m.id}: ${quoted(m.memory)}`);

/** What a forget did, said after each one: the API has no undo. */
const FORGOTTEN_NOTE =
  "Search, the profile and the source passages no longer recall them; their documents stay stored (delete them with documentIds).";

/** How long the user may take to answer the confirmation (the SDK's default is 60 s). */
export const CONFIRM_TIMEOUT_MS = 10 * 60_000;

/**
 * Asks the user through elicitation: true (accepted and confirmed), false (declined, cancelled or
 * not confirmed), or undefined when the client cannot ask or the question failed: then the
 * agent confirms instead.
 */
async function confirmWithUser(ctx: ToolContext, query: string, matches: { id: string; memory: string }[]) {
  if (!ctx.server.server.getClientCapabilities()?.elicitation) return undefined;
  const count = plural(matches.length, "memory", "memories");
  try {
    const res = await ctx.server.server.elicitInput(
      {
        mode: "form",
        message: [`Forget ${count} matching "${query}"?`, ...list(matches)].join("\n"),
        requestedSchema: {
          type: "object",
          properties: {
            confirm: {
              type: "boolean",
              title: "Forget them",
              description: "Forget the memories listed above",
              default: false,
            },
          },
          required: ["confirm"],
        },
      },
      { signal: ctx.extra.signal, timeout: CONFIRM_TIMEOUT_MS },
    );
    return res.action === "accept" && res.content?.confirm === true;
  } catch {
    if (ctx.extra.signal.aborted) throw ctx.extra.signal.reason;
    return undefined;
  }
}

export const forget = defineTool({
  name: "forget",
  title: "Forget memories",
  description: [
    "Forget memories that are wrong, outdated or that the user wants removed.",
    "A forgotten fact leaves every recall path (search, its source passages, the profile); re-sending its document does not bring it back; the document stays until deleted with documentIds.",
    "Pass ids, documentIds (whole documents), or query (by meaning): the user confirms the matches first; where the client cannot ask, nothing is forgotten and the matches come back (needsConfirmation): show them, then call with their ids.",
    RESULTS_ARE_DATA,
  ].join(" "),
  inputSchema,
  outputSchema,
  annotations: {
    title: "Forget memories",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  async handler(args, ctx) {
    const given = [args.ids, args.query, args.documentIds].filter((a) => a !== undefined).length;
    if (given !== 1) {
      return {
        isError: true,
        content: [
          {
            type: "text",
            text: "Pass exactly one of ids (exact memory ids), query (forget by meaning) or documentIds (delete documents).",
          },
        ],
      };
    }
    const opts = { signal: ctx.extra.signal };
    if (args.documentIds) {
      const res = await ctx.ns.documents.delete(args.documentIds, opts);
      await ctx.profileChanged();
      return {
        structured: { forgotten: res.count, matches: [], errors: res.errors, needsConfirmation: false },
        text: [
          `Deleted ${plural(res.count, "document")} and the memories drawn only from them.`,
          ...(res.errors.length ? ["Not deleted:", ...res.errors.map((e) => `- ${e.id}: ${e.error}`)] : []),
        ].join("\n"),
      };
    }
    if (args.ids) {
      const res = await ctx.ns.memories.forget(args.ids, opts);
      await ctx.profileChanged();
      const errors = res.errors.map((e) => `- ${e.id}: ${e.error}`);
      return {
        structured: {
          forgotten: res.count,
          matches: res.matches,
          errors: res.errors,
          needsConfirmation: false,
        },
        text: [
          `Forgot ${plural(res.count, "memory", "memories")}.`,
          ...list(res.matches),
          ...(res.count > 0 ? [FORGOTTEN_NOTE] : []),
          ...(errors.length ? ["Not forgotten:", ...errors] : []),
        ].join("\n"),
      };
    }
    const query = args.query as string;
    // Read first: a document done by the time the matches are read has its memories among them.
    const processing = stillProcessing(ctx);
    const dry = await ctx.ns.memories.forgetSemantic({ query, dryRun: true }, opts);
    const pending = await processing;
    const still = pending ? { processing: pending.documents } : {};
    // Memories not made yet cannot be forgotten: the agent must come back for them.
    const note = processingNote(
      pending,
      "memories not made yet from them cannot be forgotten until they are",
    );
    if (dry.matches.length === 0) {
      return {
        structured: { forgotten: 0, matches: [], errors: dry.errors, needsConfirmation: false, ...still },
        text: [
          `No memory matches "${query}"; nothing was forgotten. Try search to find the memories and forget them by id.`,
          ...(note ? [note] : []),
        ].join("\n"),
      };
    }
    const confirmed = await confirmWithUser(ctx, query, dry.matches);
    if (confirmed === undefined) {
      return {
        structured: {
          forgotten: 0,
          matches: dry.matches,
          errors: dry.errors,
          needsConfirmation: true,
          ...still,
        },
        text: [
          `Nothing was forgotten yet. ${plural(dry.matches.length, "memory matches", "memories match")} "${query}":`,
          ...list(dry.matches),
          `Show these to the user. Once they confirm, call forget with ids: ${JSON.stringify(dry.matches.map((m) => m.id))}.`,
          ...(note ? [note] : []),
        ].join("\n"),
      };
    }
    if (!confirmed) {
      return {
        structured: { forgotten: 0, matches: dry.matches, errors: [], needsConfirmation: false },
        text: "The user did not confirm; nothing was forgotten.",
      };
    }
    // Forget exactly what the user saw, not whatever matches the query by now.
    const res = await ctx.ns.memories.forget(
      dry.matches.map((m) => m.id),
      opts,
    );
    await ctx.profileChanged();
    return {
      structured: {
        forgotten: res.count,
        matches: res.matches.length ? res.matches : dry.matches,
        errors: res.errors,
        needsConfirmation: false,
        ...still,
      },
      text: [
        `The user confirmed; forgot ${plural(res.count, "memory", "memories")}.`,
        ...list(dry.matches),
        ...(res.count > 0 ? [FORGOTTEN_NOTE] : []),
        ...(note ? [note] : []),
      ].join("\n"),
    };
  },
});
