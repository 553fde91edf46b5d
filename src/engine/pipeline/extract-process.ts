import { resolveFile } from "../ingest/file.js";
import type { InflateLimits } from "../ingest/zip.js";
import type { StoredFile } from "../store/document-files.js";

/**
 * A child process that converts one file to text (see extraction.ts) and exits: its memory is
 * capped (--max-old-space-size) and given back whole, and when a file takes it past the cap only
 * this process dies, not the server (a worker thread's heap limit does not stop one allocation
 * far past it from aborting the whole process).
 */
export type ExtractReply =
  | { ok: true; value: Awaited<ReturnType<typeof resolveFile>> }
  | { ok: false; message: string };

process.once("message", (m: { file: StoredFile; limits: InflateLimits }) => {
  resolveFile(m.file, m.limits).then(
    (value) => process.send!({ ok: true, value } satisfies ExtractReply, () => process.exit(0)),
    (err: unknown) =>
      process.send!(
        { ok: false, message: err instanceof Error ? err.message : String(err) } satisfies ExtractReply,
        () => process.exit(0),
      ),
  );
});
