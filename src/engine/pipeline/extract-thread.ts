import { parentPort, workerData } from "node:worker_threads";
import { resolveFile } from "../ingest/file.js";
import type { InflateLimits } from "../ingest/zip.js";
import type { StoredFile } from "../store/document-files.js";

/**
 * A thread that converts one file to text (see extraction.ts) and exits: its memory is capped
 * and given back whole, whatever the file made of it.
 */
export type ExtractReply =
  | { ok: true; value: Awaited<ReturnType<typeof resolveFile>> }
  | { ok: false; message: string };

const port = parentPort!;
const { file, limits } = workerData as { file: StoredFile; limits: InflateLimits };
resolveFile(file, limits).then(
  (value) => port.postMessage({ ok: true, value } satisfies ExtractReply),
  (err: unknown) =>
    port.postMessage({
      ok: false,
      message: err instanceof Error ? err.message : String(err),
    } satisfies ExtractReply),
);
