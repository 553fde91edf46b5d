/**
 * Polls a document read until processing reaches what the caller waits for: `indexed`
 * (`system.status` done) or `memories` (status done and `system.dreamingStatus` done).
 * A `failed` document throws DocumentFailedError (carrying the document), so "it is ready"
 * is the only way this resolves.
 */
import type { Document, DocumentStatus, DreamingStatus } from "../api/index.js";
import { sleep } from "./core.js";
import { DocumentFailedError, WaitTimeoutError } from "./errors.js";

export const WAIT_TIMEOUT_DEFAULT_MS = 5 * 60_000;
export const WAIT_POLL_START_MS = 100;
export const WAIT_POLL_MAX_MS = 2_000;

export interface DocumentState {
  status: DocumentStatus;
  dreamingStatus: DreamingStatus;
}

export interface WaitForOptions {
  /** `indexed` (default): chunk search works. `memories`: its memories are extracted too. */
  until?: "indexed" | "memories";
  signal?: AbortSignal;
  /** Gives up with WaitTimeoutError after this long; default 5 minutes. */
  timeoutMs?: number;
  /** The first wait between reads (default 100 ms); it doubles up to `maxPollIntervalMs` (default 2 s). */
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
  /** Called once with each state not seen just before, in the order seen. */
  onProgress?: (state: DocumentState) => void;
}

export async function waitForDocument(
  read: (signal: AbortSignal) => Promise<Document>,
  id: string,
  opts: WaitForOptions = {},
): Promise<Document> {
  const until = opts.until ?? "indexed";
  const timeoutMs = opts.timeoutMs ?? WAIT_TIMEOUT_DEFAULT_MS;
  const maxDelay = opts.maxPollIntervalMs ?? WAIT_POLL_MAX_MS;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline.signal]) : deadline.signal;
  let last: DocumentState | undefined;
  let delay = opts.pollIntervalMs ?? WAIT_POLL_START_MS;

  // The deadline firing shows up as an abort of the inner call: report it as the wait's timeout.
  const timedOut = (err: unknown): unknown =>
    deadline.signal.aborted && !opts.signal?.aborted
      ? new WaitTimeoutError(
          `document ${id} was not ${until === "indexed" ? "indexed" : "done with its memories"} within ${timeoutMs} ms` +
            (last ? ` (last seen: status ${last.status}, dreamingStatus ${last.dreamingStatus})` : ""),
          last,
        )
      : err;

  try {
    for (;;) {
      let doc: Document;
      try {
        doc = await read(signal);
      } catch (err) {
        throw timedOut(err);
      }
      const state: DocumentState = { status: doc.system.status, dreamingStatus: doc.system.dreamingStatus };
      if (!last || last.status !== state.status || last.dreamingStatus !== state.dreamingStatus) {
        last = state;
        opts.onProgress?.(state);
      }
      if (state.status === "failed") {
        throw new DocumentFailedError(
          `document ${id} failed to process${doc.error ? `: ${doc.error}` : ""}`,
          doc as Document & { id: string },
        );
      }
      if (state.status === "done" && (until === "indexed" || state.dreamingStatus === "done")) return doc;
      try {
        await sleep(delay, signal);
      } catch (err) {
        throw timedOut(err);
      }
      delay = Math.min(delay * 2, maxDelay);
    }
  } finally {
    clearTimeout(timer);
  }
}
