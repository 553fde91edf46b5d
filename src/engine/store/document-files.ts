import type { Db } from "./db.js";
import { statement } from "./statements.js";

/** How a file's text is made (see ingest/file.ts). */
export type FileKindName = "pdf" | "docx" | "html" | "markdown" | "text" | "image" | "audio" | "video";

/** An uploaded file as stored beside its document. */
export interface StoredFile {
  bytes: Uint8Array;
  name: string | null;
  mimeType: string;
  kind: FileKindName;
}

/** The uploaded file of a document, or undefined for content sent as text. */
export async function getDocumentFile(db: Db, documentId: string): Promise<StoredFile | undefined> {
  const row = await statement<{
    name: string | null;
    mime_type: string;
    kind: StoredFile["kind"];
    bytes: Uint8Array;
  }>(db, "SELECT name, mime_type, kind, bytes FROM document_files WHERE document_id = $1").get(documentId);
  return row ? { bytes: row.bytes, name: row.name, mimeType: row.mime_type, kind: row.kind } : undefined;
}

/** Stores (or replaces) a document's file; in the caller's transaction. */
export async function putDocumentFile(db: Db, documentId: string, file: StoredFile): Promise<void> {
  await statement(
    db,
    `INSERT INTO document_files (document_id, name, mime_type, kind, size, bytes) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (document_id) DO UPDATE SET name = excluded.name, mime_type = excluded.mime_type,
       kind = excluded.kind, size = excluded.size, bytes = excluded.bytes`,
  ).run(documentId, file.name, file.mimeType, file.kind, file.bytes.byteLength, file.bytes);
}

/** Content sent as text replaces a file sent earlier under the same id. */
export async function dropDocumentFile(db: Db, documentId: string): Promise<void> {
  await statement(db, "DELETE FROM document_files WHERE document_id = $1").run(documentId);
}
