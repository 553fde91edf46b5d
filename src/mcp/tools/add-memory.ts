import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, resolve } from "node:path";
import { z } from "zod";
import {
  DateString,
  DocumentStatus,
  DreamingStatus,
  FILE_MAX_BYTES,
  Metadata,
  type Redacted,
} from "../../api/index.js";
import { type DocumentState, WaitTimeoutError } from "../../client/index.js";
import { defineTool, type ToolContext, toolError } from "./define.js";

/** A conversation's turns live in one document with this id, so the session stays one document. */
export const conversationDocumentId = (conversationId: string) => `conv-${conversationId}`;
/** Plain content gets an id from its text: adding the same text twice upserts, never duplicates. */
export const contentDocumentId = (content: string) =>
  `note-${createHash("sha256").update(content).digest("hex").slice(0, 24)}`;
/** A file gets an id from its bytes: adding the same file twice upserts. */
export const fileDocumentId = (bytes: Uint8Array) =>
  `file-${createHash("sha256").update(bytes).digest("hex").slice(0, 24)}`;

/** How long `wait: true` waits for memories before answering with the state so far. */
export const ADD_WAIT_TIMEOUT_MS = 120_000;

const inputSchema = z.strictObject({
  content: z
    .string()
    .trim()
    .min(1, "content must not be empty")
    .optional()
    .describe("Text, one http(s) URL (the page or PDF is fetched), or one conversation turn."),
  file: z
    .string()
    .min(1, "file must not be empty")
    .optional()
    .describe("Instead of content: a local file path (PDF, Word, HTML, text, image); stdio only."),
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
  // The contract's item without its description: the name says it (tools/list stays small).
  redacted: z.array(z.object({ kind: z.string(), count: z.number().int() })).optional(),
});

/** "a PIN and 2 card numbers", for the answer's sentence on what was redacted. */
const redactedWords = (redacted: Redacted) => {
  const words = redacted.map((r) =>
    r.count === 1 ? `${/^[aeiou]/i.test(r.kind) ? "an" : "a"} ${r.kind}` : `${r.count} ${r.kind}s`,
  );
  return words.length > 1 ? `${words.slice(0, -1).join(", ")} and ${words.at(-1)}` : (words[0] ?? "");
};

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
    "Store what the user shares worth remembering (preferences, people, projects, decisions), a URL, a local file, or a conversation turn.",
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
    const { content, file, conversationId, role, wait } = args;
    if ((content === undefined) === (file === undefined)) {
      return toolError(
        "Pass either content (text, a URL or a turn) or file (a local file's path), not both.",
      );
    }
    if (file !== undefined && conversationId !== undefined) {
      return toolError("A conversation turn is text: pass it as content, without file.");
    }
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
    let redacted: Redacted | undefined;
    if (conversationId !== undefined && role !== undefined) {
      const customId = conversationDocumentId(conversationId);
      // A turn's date is its own, written on its line ("[2026-03-02] user: ..."): what it says counts
      // from that day, and the transcript's date (a change of which reads it all again) stays.
      const { date, ...turnOpts } = opts;
      const line = `${date ? `[${date}] ` : ""}${turnLine(role, content as string)}`;
      const out = await appendTurn(ctx, customId, line, turnOpts);
      id = out.res.id;
      status = out.res.status;
      turns = out.turns;
      redacted = out.res.redacted;
    } else if (file !== undefined) {
      const read = await readLocalFile(file, ctx.localFiles);
      if ("error" in read) return toolError(read.error);
      const res = await ctx.ns.documents.addFile(
        { file: read.bytes, filename: basename(read.path), id: fileDocumentId(read.bytes), ...opts },
        { signal: ctx.extra.signal },
      );
      id = res.id;
      status = res.status;
      redacted = res.redacted;
    } else {
      const text = content as string;
      const res = await ctx.ns.documents.add(
        { content: text, id: contentDocumentId(text), ...opts },
        { signal: ctx.extra.signal },
      );
      id = res.id;
      status = res.status;
      redacted = res.redacted;
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
      ...(redacted?.length ? { redacted } : {}),
    };
    const what =
      conversationId !== undefined
        ? `Turn ${turns} of conversation ${conversationId}`
        : file !== undefined
          ? `File ${basename(file)}`
          : "Content";
    const text = memoriesReady
      ? `${what} stored as document ${id}; its memories are ready to search.`
      : wait
        ? `${what} stored as document ${id} (status ${status}); memories are still being extracted, search again in a little while.`
        : `${what} stored as document ${id} (status ${status}). Memories are extracted in the background.`;
    // Said, so that the agent neither repeats the secret nor expects it back from search.
    const secrets = redacted?.length
      ? ` Not stored: ${redactedWords(redacted)}, replaced by a [redacted: …] marker (secrets are kept out of memory); the rest was kept.`
      : "";
    return { structured, text: text + secrets };
  },
});

/**
 * Reads a file named by path, for a server on the user's own machine only: over HTTP the path
 * would name a file of the server's machine, which the caller must not be able to read.
 */
async function readLocalFile(
  path: string,
  allowed: boolean,
): Promise<{ bytes: Uint8Array; path: string } | { error: string }> {
  if (!allowed) {
    return {
      error:
        "file paths are read only by a memctx running on your machine (stdio); this server is reached over HTTP, so it cannot read your files. Pass the file's text as content instead.",
    };
  }
  const full = resolve(path.replace(/^~(?=$|[\\/])/, homedir()));
  let size: number;
  try {
    const info = await stat(full);
    if (!info.isFile()) return { error: `file: ${full} is not a regular file; pass the path of a file.` };
    size = info.size;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { error: `file: cannot read ${full} (${code ?? String(err)}); check the path.` };
  }
  if (size > FILE_MAX_BYTES) {
    return {
      error: `file: ${full} is ${size} bytes; files must be at most ${FILE_MAX_BYTES} bytes (50 MB).`,
    };
  }
  return { bytes: new Uint8Array(await readFile(full)), path: full };
}
