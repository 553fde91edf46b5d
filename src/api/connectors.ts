import { z } from "zod";
import { includeList, JsonObject, queryBool, Timestamps } from "./common.js";
import { CONNECTOR_DOCUMENT_LIMIT_MAX, CONNECTOR_SYNC_INTERVAL_MAX_SECONDS } from "./limits.js";

export const OAUTH_PROVIDERS = ["notion", "google-drive", "onedrive", "gmail", "github"] as const;
export const CONFIG_PROVIDERS = ["web-crawler", "s3", "granola"] as const;
export const Provider = z.enum([...OAUTH_PROVIDERS, ...CONFIG_PROVIDERS]);
export type Provider = z.infer<typeof Provider>;

export const isOAuthProvider = (p: Provider): p is (typeof OAUTH_PROVIDERS)[number] =>
  (OAUTH_PROVIDERS as readonly string[]).includes(p);

const DocumentLimit = z
  .number()
  .int("documentLimit must be an integer")
  .min(1, "documentLimit must be at least 1")
  .max(CONNECTOR_DOCUMENT_LIMIT_MAX, `documentLimit must be at most ${CONNECTOR_DOCUMENT_LIMIT_MAX}`);

/**
 * memctx's extension: seconds between scheduled syncs, counted from the end of the last run
 * (default daily); 0 syncs only when the connector is created or a sync is triggered.
 */
const SyncIntervalSeconds = z
  .number()
  .int("syncIntervalSeconds must be an integer")
  .min(0, "syncIntervalSeconds must be 0 (no scheduled syncs) or more")
  .max(
    CONNECTOR_SYNC_INTERVAL_MAX_SECONDS,
    `syncIntervalSeconds must be at most ${CONNECTOR_SYNC_INTERVAL_MAX_SECONDS} (a year)`,
  );

/** Provider configuration; each provider validates its own keys (web-crawler needs `startUrl`). */
export const ConnectorConfig = JsonObject;
/** What the connector syncs; provider-specific (for example github repositories). */
export const Selection = JsonObject;

export const CreateConnectorBody = z.strictObject({
  provider: Provider,
  redirectUrl: z.url("redirectUrl must be an absolute URL").optional(),
  config: ConnectorConfig.optional(),
  documentLimit: DocumentLimit.optional(),
  syncIntervalSeconds: SyncIntervalSeconds.optional(),
});
export type CreateConnectorBody = z.input<typeof CreateConnectorBody>;

export const Authorization = z.looseObject({ url: z.string(), expiresAt: z.string() });

export const CreateConnectorResponse = z.looseObject({
  id: z.string(),
  authorization: Authorization.nullable(),
});
export type CreateConnectorResponse = z.infer<typeof CreateConnectorResponse>;

export const SyncRun = z.looseObject({
  id: z.string(),
  error: z.string().nullish(),
  system: z.looseObject({
    status: z.string(),
    startedAt: z.string().nullish(),
    finishedAt: z.string().nullish(),
  }),
  counts: z
    .looseObject({
      added: z.number().int().optional(),
      updated: z.number().int().optional(),
      unchanged: z.number().int().optional(),
      deleted: z.number().int().optional(),
      skipped: z.number().int().optional(),
      failed: z.number().int().optional(),
    })
    .optional(),
  failedItems: z.array(z.looseObject({ item: z.string(), reason: z.string() })).optional(),
});
export type SyncRun = z.infer<typeof SyncRun>;

export const Connector = z.looseObject({
  id: z.string(),
  provider: Provider,
  namespace: z.string().optional(),
  account: z.string().nullish(),
  config: ConnectorConfig.nullish(),
  selection: Selection.nullish(),
  documentLimit: z.number().int().nullish(),
  /** Seconds between scheduled syncs (0: none), and when the next one is due (null: none scheduled). */
  syncIntervalSeconds: z.number().int().optional(),
  nextSyncAt: z.string().nullish(),
  latestRun: SyncRun.nullish(),
  syncs: z.array(SyncRun).optional(),
  picker: z.looseObject({ url: z.string() }).nullish(),
  authorization: Authorization.nullish(),
  system: Timestamps.optional(),
});
export type Connector = z.infer<typeof Connector>;

export const ConnectorsResponse = z.looseObject({ connectors: z.array(Connector) });
export type ConnectorsResponse = z.infer<typeof ConnectorsResponse>;

export const GetConnectorQuery = z.strictObject({ include: includeList(["syncs", "picker"] as const) });
export type GetConnectorQuery = z.input<typeof GetConnectorQuery>;

export const PatchConnectorBody = z
  .strictObject({
    selection: Selection.optional(),
    documentLimit: DocumentLimit.optional(),
    syncIntervalSeconds: SyncIntervalSeconds.optional(),
  })
  .refine(
    (b) => b.selection !== undefined || b.documentLimit !== undefined || b.syncIntervalSeconds !== undefined,
    { message: "send selection, documentLimit, syncIntervalSeconds or several" },
  );
export type PatchConnectorBody = z.input<typeof PatchConnectorBody>;

export const SyncResponse = z.looseObject({ id: z.string(), runId: z.string(), status: z.string() });
export type SyncResponse = z.infer<typeof SyncResponse>;

export const DeleteConnectorQuery = z.strictObject({ deleteDocuments: queryBool.optional() });
export type DeleteConnectorQuery = z.input<typeof DeleteConnectorQuery>;

export const DeleteConnectorResponse = z.looseObject({
  id: z.string(),
  deleted: z.boolean(),
  documentsDeleted: z.number().int(),
});
export type DeleteConnectorResponse = z.infer<typeof DeleteConnectorResponse>;
