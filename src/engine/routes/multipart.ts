import { once } from "node:events";
import { Busboy } from "@fastify/busboy";
import { FILE_MAX_BYTES, UPLOAD_BODY_MAX_BYTES, UPLOAD_FIELDS_MAX_BYTES } from "../../api/limits.js";
import { DomainError, InputError, TooLargeError } from "../errors.js";
import { checkFileLimits, detectFile, UnsupportedFileError } from "../ingest/file.js";
import { ArchiveLimitError } from "../ingest/zip.js";
import type { StoredFile } from "../store/document-files.js";
import { discardRest } from "./refused-body.js";
import { Spool } from "./spool.js";

/**
 * The file part of an upload. Its bytes are streamed to a file of the upload folder as they come,
 * and read back only once the whole part arrived within the limit, to be stored.
 */
export interface UploadedFile {
  bytes: Buffer;
  /** The part's filename, without any directory. */
  name: string | null;
  /** The part's own Content-Type, if any. */
  mimeType: string | null;
}

export interface UploadForm {
  fields: Record<string, string>;
  file: UploadedFile | undefined;
}

/** The only file part an upload takes. */
export const FILE_PART = "file";
/** Text fields per upload: the forms have about ten. */
const FIELDS_MAX = 32;

/** The upload endpoints' paths (`/ns/{ns}/document/file`, `/v3/documents/file`), for the body limit. */
export const isUploadPath = (pathname: string) =>
  /^\/ns\/[^/]+\/document\/file\/?$/.test(pathname) || /^\/v3\/documents\/file\/?$/.test(pathname);

export const fileTooLarge = () =>
  new TooLargeError("File too large", `${FILE_PART}: must be at most ${FILE_MAX_BYTES} bytes (50 MB)`);

/**
 * Reads a multipart/form-data upload as it streams in (busboy): text fields, and the one `file`
 * part, written to a temporary file while it stays within FILE_MAX_BYTES. Past the limit nothing
 * more is written and the answer is 413; past the whole body's limit reading stops at once. Hono's
 * own parseBody (Request.formData) would hold the whole body before any limit could apply; holding
 * the part in memory while it arrives kept 210 MB of slow uploads as 1.9 GB of RSS.
 */
export async function readUpload(req: Request, dataDir: string): Promise<UploadForm> {
  const contentType = req.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType) || !req.body) {
    throw new InputError("body", `must be multipart/form-data with the file in a part named '${FILE_PART}'`);
  }
  let failure: Error | undefined;
  const fail = (err: Error) => {
    failure ??= err;
  };
  const fields: Record<string, string> = {};
  let file: UploadedFile | undefined;
  /** The file part, once it arrived whole within the limit. */
  let arrived: Omit<UploadedFile, "bytes"> | undefined;
  let spooled: Spool | undefined;
  let bb: InstanceType<typeof Busboy>;
  try {
    bb = new Busboy({
      headers: { "content-type": contentType },
      limits: { fileSize: FILE_MAX_BYTES, files: 1, fields: FIELDS_MAX, fieldSize: UPLOAD_FIELDS_MAX_BYTES },
    });
  } catch (err) {
    throw new InputError("body", `not a readable multipart body (${(err as Error).message})`);
  }
  bb.on("file", (name, stream, filename, _encoding, mimeType) => {
    // A part cut off before its boundary ("Part terminated early": the body ended, or its
    // Content-Length was shorter than what was sent) errors the part's stream: unheard, that
    // error would stop the process.
    stream.on("error", (err: Error) =>
      fail(new InputError("body", `not a readable multipart body (${err.message})`)),
    );
    if (name !== FILE_PART) {
      fail(new InputError(name, `unknown file part: send the file in a part named '${FILE_PART}'`));
      stream.resume();
      return;
    }
    let spool: Spool;
    try {
      spool = new Spool(dataDir, (err) => {
        fail(err);
        stream.resume();
      });
    } catch (err) {
      // The upload folder cannot be made (a full disk): the request fails with that error.
      fail(err as Error);
      stream.resume();
      return;
    }
    spooled = spool;
    stream.on("data", (chunk: Buffer) => {
      if (failure) return;
      // Busboy waits for the file to take the chunk: the socket is read no faster than the disk.
      if (!spool.write(chunk)) {
        stream.pause();
        void spool.drained().then(() => stream.resume());
      }
    });
    stream.on("limit", () => fail(fileTooLarge()));
    stream.on("end", () => {
      if (failure || stream.truncated) return;
      arrived = {
        name: filename || null,
        mimeType: mimeType && mimeType !== "application/octet-stream" ? mimeType : null,
      };
    });
  });
  bb.on("field", (name, value, _nameTruncated, valueTruncated) => {
    if (name === FILE_PART)
      fail(new InputError(FILE_PART, "must be a file part (with a filename), not a text field"));
    else if (valueTruncated) fail(new InputError(name, `must be at most ${UPLOAD_FIELDS_MAX_BYTES} bytes`));
    else if (name in fields) fail(new InputError(name, "sent twice; send each field once"));
    else fields[name] = value;
  });
  bb.on("filesLimit", () => fail(new InputError(FILE_PART, "one file per request")));
  bb.on("fieldsLimit", () => fail(new InputError("body", `at most ${FIELDS_MAX} fields`)));

  const finished = new Promise<void>((resolve, reject) => {
    bb.on("finish", resolve);
    bb.on("error", (err: Error) =>
      reject(new InputError("body", `not a readable multipart body (${err.message})`)),
    );
  });
  // Busboy errors surface through `finished`; a write after one must not throw unhandled.
  finished.catch(() => {});
  const reader = req.body.getReader();
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      // Content-Length may be absent (chunked) or lie: the stream itself is counted.
      if (total > UPLOAD_BODY_MAX_BYTES) throw failure instanceof TooLargeError ? failure : fileTooLarge();
      if (!bb.write(value)) await Promise.race([once(bb, "drain"), finished]);
    }
    bb.end();
    await finished;
    if (failure) throw failure;
    // The whole part arrived within the limit: its bytes are read back (off the event loop) to be stored.
    if (arrived && spooled) file = { ...arrived, bytes: await spooled.read() };
  } catch (err) {
    bb.destroy();
    // Refused for its size: the rest is dropped before the answer, which then reaches the client.
    if (err instanceof TooLargeError) await discardRest(reader);
    else await reader.cancel().catch(() => {});
    // A refusal, or the upload's own file failing (a full disk answers 507).
    if (err instanceof DomainError || err === failure) throw err;
    // The body stream broke off: the caller went away (or lied about the length) mid-upload.
    throw new InputError("body", `the upload ended before its end (${(err as Error).message})`);
  } finally {
    await spooled?.remove();
  }
  return { fields, file };
}

/**
 * The uploaded file as a document's file: its kind from its bytes, then from what was declared
 * (`fileType`, `mimeType`, the part's Content-Type, the name's extension); 400 for a type memctx
 * neither reads nor keeps, 413 for a Word document whose archive declares more than it may inflate to.
 */
export function storedFile(
  upload: UploadedFile,
  declared: { mimeType?: string | undefined; fileType?: string | undefined },
): StoredFile & { type: string } {
  try {
    const kind = detectFile(upload.bytes, {
      fileType: declared.fileType,
      mimeType: declared.mimeType ?? upload.mimeType ?? undefined,
      name: upload.name,
    });
    checkFileLimits(upload.bytes, kind.kind);
    return {
      bytes: upload.bytes,
      name: upload.name,
      mimeType: kind.mimeType,
      kind: kind.kind,
      type: kind.type,
    };
  } catch (err) {
    if (err instanceof UnsupportedFileError) throw new InputError(FILE_PART, err.message, "Unsupported file");
    if (err instanceof ArchiveLimitError)
      throw new TooLargeError("File inflates too far", `${FILE_PART}: ${err.message}`);
    throw err;
  }
}
