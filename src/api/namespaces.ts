import { z } from "zod";
import { Namespace, Pagination, Timestamps } from "./common.js";
import { NAMESPACE_CONTEXT_MAX_LENGTH, ORGANIZATION_CONTEXT_MAX_LENGTH } from "./limits.js";

export const NamespaceSummary = z.looseObject({
  id: z.string(),
  namespace: z.string(),
  documentCount: z.number().int(),
  memoryCount: z.number().int(),
  description: z.string().nullish(),
  system: Timestamps,
});
export type NamespaceSummary = z.infer<typeof NamespaceSummary>;

export const NamespacesResponse = z.looseObject({
  namespaces: z.array(NamespaceSummary),
  pagination: Pagination.optional(),
});
export type NamespacesResponse = z.infer<typeof NamespacesResponse>;

/**
 * memctx's: the namespace's documents whose processing has not finished, so that a reader can
 * tell "nothing stored" from "not ready yet". Absent from the hosted service: there, read
 * `system.status` and `system.dreamingStatus` on document list items.
 */
export const NamespaceProcessing = z.looseObject({
  /** Documents not indexed yet (queued or in a processing stage): neither passages nor memories searchable. */
  documents: z.number().int(),
  /** Documents whose memories are not made yet (`dreamingStatus: dreaming`), those above included. */
  dreaming: z.number().int(),
});
export type NamespaceProcessing = z.infer<typeof NamespaceProcessing>;

export const NamespaceRecord = z.looseObject({
  namespace: z.string(),
  supportingContext: z.string().nullable(),
  documentCount: z.number().int(),
  memoryCount: z.number().int(),
  processing: NamespaceProcessing.optional(),
  /**
   * memctx's: whether secrets are redacted from what is added (the namespace's own setting, else the
   * deployment's, MEMCTX_SECRET_SCREENING).
   */
  secretScreening: z.boolean().optional(),
  system: Timestamps,
});
export type NamespaceRecord = z.infer<typeof NamespaceRecord>;

export const PatchNamespaceBody = z
  .strictObject({
    supportingContext: z
      .string()
      .max(NAMESPACE_CONTEXT_MAX_LENGTH, `must be at most ${NAMESPACE_CONTEXT_MAX_LENGTH} characters`)
      .nullable()
      .optional(),
    /**
     * memctx's: false keeps secrets in what this namespace stores, as sent; true screens them
     * whatever the deployment says; null goes back to the deployment's setting.
     */
    secretScreening: z.boolean({ error: "must be true, false or null" }).nullable().optional(),
  })
  .refine((b) => b.supportingContext !== undefined || b.secretScreening !== undefined, {
    message: "send supportingContext or secretScreening",
    path: ["supportingContext"],
  });
export type PatchNamespaceBody = z.input<typeof PatchNamespaceBody>;

/** `moveTo` is read from the query only: a body on DELETE is ignored (reading it there would delete). */
export const DeleteNamespaceQuery = z.strictObject({ moveTo: Namespace.optional() });
export type DeleteNamespaceQuery = z.input<typeof DeleteNamespaceQuery>;

export const OperationResponse = z.looseObject({ operationId: z.string(), status: z.string().optional() });
export type OperationResponse = z.infer<typeof OperationResponse>;

export const Organization = z.looseObject({
  organizationalContext: z.string().nullable(),
  namespaceCount: z.number().int(),
});
export type Organization = z.infer<typeof Organization>;

export const PatchOrganizationBody = z.strictObject({
  organizationalContext: z
    .string()
    .max(ORGANIZATION_CONTEXT_MAX_LENGTH, `must be at most ${ORGANIZATION_CONTEXT_MAX_LENGTH} characters`)
    .nullable(),
});
export type PatchOrganizationBody = z.input<typeof PatchOrganizationBody>;
