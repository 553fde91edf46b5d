/**
 * What the session's namespace is still processing, said beside every answer that reads memory
 * (search, list, forget, the profile): an agent that asks right after telling something must be
 * able to tell "nothing stored" from "not ready yet", or it answers "I don't know" twelve times.
 */
import { APIUserAbortError, MemoryApiError, NotFoundError } from "../client/index.js";
import { plural } from "../plural.js";
import type { ToolContext } from "./tools/define.js";

/** Documents of the namespace whose memories are not all made yet. */
export interface Processing {
  documents: number;
  /** Counted from the newest documents only (a service that does not count them): at least this many. */
  atLeast: boolean;
}

/** Newest documents read where the service does not count those still processing (the hosted service). */
export const RECENT_DOCUMENTS = 20;

/**
 * The namespace's documents still being processed: the namespace record's count (memctx's
 * `processing`), else the newest documents' states, as the spec says to read them. Undefined when
 * neither can be read: the answer it goes with stands without it.
 */
export async function stillProcessing(ctx: ToolContext): Promise<Processing | undefined> {
  const opts = { signal: ctx.extra.signal };
  try {
    const record = await ctx.ns.get(opts);
    if (record.processing) {
      // Memories come last: a document not indexed is also still dreaming.
      return { documents: Math.max(record.processing.documents, record.processing.dreaming), atLeast: false };
    }
    const { documents } = await ctx.ns.documents.list(
      { page: 1, limit: RECENT_DOCUMENTS, sort: "updatedAt", order: "desc" },
      undefined,
      opts,
    );
    const busy = documents.filter(
      (d) =>
        d.system.status !== "failed" && (d.system.status !== "done" || d.system.dreamingStatus !== "done"),
    ).length;
    return { documents: busy, atLeast: busy === RECENT_DOCUMENTS };
  } catch (err) {
    // A namespace never written holds nothing, processed or not.
    if (err instanceof NotFoundError) return { documents: 0, atLeast: false };
    if (err instanceof MemoryApiError && !(err instanceof APIUserAbortError)) return undefined;
    throw err;
  }
}

/**
 * "2 documents are still being processed: what they say is not searchable yet (...)", or nothing
 * when none is. `what` says what waits on them, in the tool's words.
 */
export function processingNote(p: Processing | undefined, what: string): string | undefined {
  if (!p || p.documents === 0) return undefined;
  const n = `${p.atLeast ? "At least " : ""}${plural(p.documents, "document")}`;
  return `${n} ${p.documents === 1 ? "is" : "are"} still being processed: ${what}. Ask again in a moment, or add with wait: true to wait until memories are ready.`;
}
