/**
 * File uploads: `POST /ns/{namespace}/document/file` (v5, memctx's) and the legacy
 * `POST /v3/documents/file`, both multipart/form-data. Every part but `file` is a text field;
 * objects (metadata, containerTags) travel as JSON strings. These schemas describe the wire form:
 * the engine validates the fields with them, the client builds the form from them.
 */
import { z } from "zod";
import { DateString, DocumentId, Metadata, Namespace } from "./common.js";
import { AddDocumentResponse, Dreaming, TaskType } from "./documents.js";
import { ENTITY_CONTEXT_MAX_LENGTH, FILE_MAX_BYTES } from "./limits.js";

/** The uploaded file. Its type is read from its bytes first, then from what is declared. */
export const FileField = z
  .file({ error: "file must be a file part of a multipart/form-data body" })
  .min(1, "file must not be empty")
  .max(FILE_MAX_BYTES, `file must be at most ${FILE_MAX_BYTES} bytes (50 MB)`);

/** A JSON value sent as a multipart text field. */
const jsonField = <T extends z.ZodType>(schema: T, what: string) =>
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: `must be ${what} as a JSON string` });
        return z.NEVER;
      }
    })
    .pipe(schema);

const EntityContext = z
  .string()
  .max(ENTITY_CONTEXT_MAX_LENGTH, `must be at most ${ENTITY_CONTEXT_MAX_LENGTH} characters`);

/** Declared type of the file: used when its bytes do not say (text has no signature). */
const declared = {
  mimeType: z.string().max(255, "must be at most 255 characters").optional(),
  fileType: z.string().max(64, "must be at most 64 characters").optional(),
};

// ---------- POST /ns/{namespace}/document/file ----------

const addFileFields = {
  id: DocumentId.optional(),
  metadata: jsonField(Metadata, "a flat object").optional(),
  supportingContext: EntityContext.optional(),
  entityContext: EntityContext.optional(),
  date: DateString.optional(),
  documentDate: DateString.optional(),
  filterByMetadata: jsonField(Metadata, "a flat object").optional(),
  taskType: TaskType.optional(),
  dreaming: Dreaming.optional(),
  ...declared,
};

type AliasPairs = {
  supportingContext?: unknown;
  entityContext?: unknown;
  date?: unknown;
  documentDate?: unknown;
};
const aliases = <T extends z.ZodObject>(o: T) =>
  o
    .refine((b: AliasPairs) => !(b.supportingContext !== undefined && b.entityContext !== undefined), {
      message: "send supportingContext or its alias entityContext, not both",
      path: ["entityContext"],
    })
    .refine((b: AliasPairs) => !(b.date !== undefined && b.documentDate !== undefined), {
      message: "send date or its alias documentDate, not both",
      path: ["documentDate"],
    });

/** The text fields of a v5 upload, as the engine validates them once the file is read. */
export const AddDocumentFileFields = aliases(z.strictObject(addFileFields));
/** The whole v5 upload form: `file` plus the fields of `POST /ns/{namespace}/document`. */
export const AddDocumentFileBody = aliases(z.strictObject({ file: FileField, ...addFileFields }));
export type AddDocumentFileBody = z.input<typeof AddDocumentFileBody>;
export const AddDocumentFileResponse = AddDocumentResponse;

// ---------- POST /v3/documents/file ----------

const legacyFileFields = {
  containerTag: Namespace.optional(),
  containerTags: jsonField(z.array(Namespace), "an array of namespaces").optional(),
  metadata: jsonField(Metadata, "a flat object").optional(),
  customId: DocumentId.optional(),
  entityContext: EntityContext.optional(),
  taskType: TaskType.optional(),
  dreaming: Dreaming.optional(),
  ...declared,
};

/** The text fields of a legacy upload. */
export const LegacyFileFields = z.strictObject(legacyFileFields);
export const LegacyFileBody = z.strictObject({ file: FileField, ...legacyFileFields });
export type LegacyFileBody = z.input<typeof LegacyFileBody>;
export const LegacyFileResponse = z.looseObject({ id: z.string(), status: z.string() });
