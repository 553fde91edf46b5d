/**
 * `memctx export` and `memctx import`: an organization's memory as JSON Lines, to take elsewhere.
 *
 * The file: the first line is the header `{"kind":"memctx-export","version":1,"memctx":"<version>",
 * "exportedAt":"<ISO time>"}`; each further line is one record, `{"kind": ..., <columns>}`:
 * - `organization`: `organizationalContext`;
 * - `bucket`: a profile bucket, `namespace` null for the organization's own, `name`, `description`;
 * - `namespace`: `name`, `supportingContext`; the records after it, up to the next namespace,
 *   belong to it;
 * - `document`: `id`, `customId`, `content`, `text`, `title`, `type`, `url`, `source`, `metadata`,
 *   `documentDate`, `status`, `dreamingStatus`, `createdAt`, `updatedAt`, …;
 * - `chunk`: `id`, `documentId`, `position`, `content`, offsets, `label`, `speaker`, `context`, and
 *   `vector` ({model, embedding: base64 of little-endian float32}) when it has one;
 * - `memory`: `id`, `memory`, `metadata`, `version`, `isLatest`, `isForgotten`, `forgetAfter`,
 *   `forgetReason`, `parentMemoryId`, `rootMemoryId`, `documentId`, …, and `vector`;
 * - `memorySource`: which documents a memory came from; `relation`: `fromId` updates | extends |
 *   derives `toId`; `forgottenSentence`: `documentId`, `memoryId`, `sentence` a forgotten memory
 *   came from (kept out of that document's chunks). A file without them imports as before.
 * Times are ISO strings, as stored. Ids are kept, so an import goes into namespaces that are empty.
 */
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { VERSION } from "../version.js";
import type { Db } from "./store/db.js";
import {
  type ExportRecord,
  exportRecords,
  type ImportLine,
  ImportRecordError,
  importRecords,
} from "./store/export.js";

export const EXPORT_FORMAT = "memctx-export";
export const EXPORT_VERSION = 1;

/** Progress is reported every this many records. */
const PROGRESS_EVERY = 500;

export type Progress = (counts: Readonly<Record<string, number>>, done: boolean) => void;

/** Writes the organization's namespaces (or one) to `out`, a line a record; answers the counts per kind. */
export async function exportData(
  db: Db,
  out: Writable,
  opts: { organization: string; namespace?: string; progress?: Progress },
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let n = 0;
  // A write error (a full disk) ends the export with that error, not an unhandled event.
  let failed: Error | undefined;
  const onError = (err: Error) => {
    failed = err;
  };
  out.on("error", onError);
  const write = async (record: object) => {
    if (failed) throw failed;
    // Backpressure: a large export streams instead of piling up in memory (once() rejects on 'error').
    if (!out.write(`${JSON.stringify(record)}\n`)) await once(out, "drain");
  };
  await write({
    kind: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    memctx: VERSION,
    exportedAt: new Date().toISOString(),
  });
  await exportRecords(db, opts.organization, opts.namespace, async (record) => {
    await write(record);
    counts[record.kind] = (counts[record.kind] ?? 0) + 1;
    if (++n % PROGRESS_EVERY === 0) opts.progress?.(counts, false);
  });
  out.off("error", onError);
  if (failed) throw failed;
  opts.progress?.(counts, true);
  return counts;
}

/** A file that cannot be imported; nothing of it was written. */
export class ImportError extends Error {}

/**
 * Reads an export from `input` into the organization, all or nothing (one write transaction:
 * other processes on this data directory wait for it). Answers the counts per kind.
 */
export async function importData(
  db: Db,
  input: Readable,
  opts: { organization: string; progress?: Progress },
): Promise<Record<string, number>> {
  // Records read so far, by kind: each one read is written, or the import fails.
  const read: Record<string, number> = {};
  async function* lines(): AsyncGenerator<ImportLine> {
    // Made here, once the store iterates (inside its transaction): lines read before would be lost.
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    let line = 0;
    let began = false;
    for await (const text of lines) {
      line++;
      if (!text.trim()) continue;
      let record: ExportRecord;
      try {
        record = JSON.parse(text) as ExportRecord;
      } catch {
        throw new ImportError(`line ${line} is not JSON`);
      }
      if (!began) {
        const header = record as { kind?: unknown; version?: unknown };
        if (header.kind !== EXPORT_FORMAT) {
          throw new ImportError(`line 1 is not a memctx export header ({"kind":"${EXPORT_FORMAT}",…})`);
        }
        if (header.version !== EXPORT_VERSION) {
          throw new ImportError(
            `the export is format version ${String(header.version)}; this memctx reads version ${EXPORT_VERSION}`,
          );
        }
        began = true;
        continue;
      }
      yield { line, record };
      read[record.kind] = (read[record.kind] ?? 0) + 1;
      if (line % PROGRESS_EVERY === 0) opts.progress?.(read, false);
    }
    if (!began) throw new ImportError("the file is empty");
  }
  let counts: Record<string, number>;
  try {
    counts = await importRecords(db, opts.organization, lines());
  } catch (err) {
    if (err instanceof ImportRecordError) throw new ImportError(err.message);
    throw err;
  }
  opts.progress?.(counts, true);
  return counts;
}
