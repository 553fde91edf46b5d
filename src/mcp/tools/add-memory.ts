import { createHash } from "node:crypto";
import { z } from "zod";
import { DateString, DocumentStatus, DreamingStatus, Metadata } from "../../api/index.js";
import { type DocumentState, WaitTimeoutError } from "../../client/index.js";
import { defineTool, type ToolContext } from "./define.js";

/** A conversation's turns live in one document with this id, so the session stays one document. */
export const conversationDocumentId = (conversationId: string) => `conv-${conversationId}`;
/** Plain content gets an id from its text: adding the same text twice upserts, never duplicates. */
export const contentDocumentId = (content: string) =>
  `note-${createHash("sha256").update(content).digest("hex").slice(0, 24)}`;

/** How long `wait: true` waits for memories before answering with the state so far. */
export const ADD_WAIT_TIMEOUT_MS = 120_000;

const inputSchema = z.strictObject({
  content: z
    .string()
    .trim()
    .min(1, "content must not be empty")
    .describe("Text, one http(s) URL (the page or PDF is fetched), or one conversation turn."),
  conversationId: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,200}$/, "conversationId must be 1 to 200 letters, digits or _ . : -")
    .optional()
    .describe("The same for every turn of one conversation; needs role."),
  role: z
    .string()
    .regex(/^[^\s:][^:\n\r]{0,39}$/, "role must be 1 to 40 characters without ':' or line breaks")
    .optional()
    .describe('Speaker, e.g. "user" or a name; needs conversationId.'),
  metadata: Metadata.optional().describe('Tags to filter on later, e.g. {"project": "atlas"}.'),
  date: DateString.optional().describe(
    "YYYY-MM-DD or ISO time the content is from; relative dates in it count from this. Default now.",
  ),
  wait: z.boolean().default(false).describe("Wait (up to 2 minutes) until the memories are extracted."),
});

const outputSchema = z.object({
  id: z.string().describe("The document id."),
  status: DocumentStatus,
  dreamingStatus: DreamingStatus.optional(),
  conversationId: z.string().optional(),
  turns: z.number().int().optional().describe("Turns in the transcript so far."),
  memoriesReady: z.boolean().describe("Memories searchable now."),
});

/** One turn per line, "role: text": line breaks inside a turn would split it into two turns. */
const turnLine = (role: string, text: string) => `${role.trim()}: ${text.replace(/\s*[\r\n]+\s*/g, " ")}`;

/**
 * Appends one turn to the conversation's transcript: the API adds it to the stored document in one
 * transaction (append), so the turn alone travels, and turns from several sessions all stay.
 */
async function appendTurn(ctx: ToolContext, id: string, line: string, opts: AddOptions) {
  const res = await ctx.ns.documents.add(
    { content: line, id, append: true, ...opts },
    { signal: ctx.extra.signal },
  );
  return { res, turns: res.lines };
}

interface AddOptions {
  metadata?: Metadata;
  date?: string;
  dreaming?: "instant";
}

const STEPS: Record<DocumentState["status"], number> = {
  unknown: 0,
  queued: 1,
  extracting: 2,
  chunking: 3,
  embedding: 4,
  indexing: 5,
  done: 6,
  failed: 6,
};
const TOTAL_STEPS = 7;

export const addMemory = defineTool({
  name: "add_memory",
  title: "Add memory",
  description: [
    "Store what the user shares worth remembering (preferences, people, projects, decisions), a URL, or a conversation turn.",
    "For a turn pass conversationId and role: turns append to one transcript.",
    "Memories are extracted in the background (wait: true waits). The same text twice is stored once.",
    "An error names the field to fix.",
  ].join(" "),
  inputSchema,
  outputSchema,
  annotations: {
    title: "Add memory",
    readOnlyHint: false,
    // Only ever adds: plain content upserts under an id taken from its text, turns are appended.
    destructiveHint: false,
    // Plain content is idempotent, but a repeated conversation turn is appended twice.
    idempotentHint: false,
    // A URL is fetched from the web.
    openWorldHint: true,
  },
  async handler(args, ctx) {
    const { content, conversationId, role, wait } = args;
    if ((conversationId === undefined) !== (role === undefined)) {
      return {
        isError: true,
        content: [
          {
            type: "text",
            text: `${conversationId === undefined ? "role" : "conversationId"} was given without ${conversationId === undefined ? "conversationId" : "role"}: a conversation turn needs both (conversationId groups the turns, role names the speaker). Pass both, or neither for plain content.`,
          },
        ],
      };
    }
    const opts: AddOptions = {};
    if (args.metadata) opts.metadata = args.metadata;
    if (args.date) opts.date = args.date;
    // Whoever waits wants the memories now: instant dreaming skips the batching delay.
    if (wait) opts.dreaming = "instant";

    // The id the API gives the document: the one list and search show (and forget's matches cite).
    let id: string;
    let status: DocumentState["status"];
    let turns: number | undefined;
    if (conversationId !== undefined && role !== undefined) {
      const customId = conversationDocumentId(conversationId);
      const out = await appendTurn(ctx, customId, turnLine(role, content), opts);
      id = out.res.id;
      status = out.res.status;
      turns = out.turns;
    } else {
      const res = await ctx.ns.documents.add(
        { content, id: contentDocumentId(content), ...opts },
        { signal: ctx.extra.signal },
      );
      id = res.id;
      status = res.status;
    }
    await ctx.profileChanged();

    let dreamingStatus: DocumentState["dreamingStatus"] | undefined;
    let memoriesReady = false;
    if (wait) {
      await ctx.progress(STEPS[status], TOTAL_STEPS, `document ${id}: ${status}`);
      try {
        const doc = await ctx.ns.documents.waitFor(id, {
          until: "memories",
          signal: ctx.extra.signal,
          timeoutMs: ADD_WAIT_TIMEOUT_MS,
          onProgress: (s) => {
            const step = s.status === "done" && s.dreamingStatus === "done" ? TOTAL_STEPS : STEPS[s.status];
            void ctx.progress(step, TOTAL_STEPS, `document ${id}: ${s.status}, memories ${s.dreamingStatus}`);
          },
        });
        status = doc.system.status;
        dreamingStatus = doc.system.dreamingStatus;
        memoriesReady = true;
        await ctx.profileChanged();
      } catch (err) {
        if (!(err instanceof WaitTimeoutError)) throw err;
        const last = err.lastState as DocumentState | undefined;
        if (last) {
          status = last.status;
          dreamingStatus = last.dreamingStatus;
        }
      }
    } else {
      ctx.watchDreaming(id);
    }

    const structured = {
      id,
      status,
      ...(dreamingStatus ? { dreamingStatus } : {}),
      ...(conversationId !== undefined ? { conversationId, turns } : {}),
      memoriesReady,
    };
    const what = conversationId !== undefined ? `Turn ${turns} of conversation ${conversationId}` : "Content";
    const text = memoriesReady
      ? `${what} stored as document ${id}; its memories are ready to search.`
      : wait
        ? `${what} stored as document ${id} (status ${status}); memories are still being extracted, search again in a little while.`
        : `${what} stored as document ${id} (status ${status}). Memories are extracted in the background.`;
    return { structured, text };
  },
});
