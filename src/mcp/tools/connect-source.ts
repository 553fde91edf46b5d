import { z } from "zod";
import {
  Authorization,
  Connector,
  CreateConnectorBody,
  isOAuthProvider,
  Provider,
  SyncRun,
} from "../../api/index.js";
import { defineTool } from "./define.js";

/** The contract's create body, each field described for a model. */
const body = CreateConnectorBody.shape;
const inputSchema = z.strictObject({
  provider: body.provider.describe(
    "OAuth (the user signs in): notion, google-drive, onedrive, gmail, github; else set config.",
  ),
  redirectUrl: body.redirectUrl.describe(
    "OAuth: where the user is sent back; must match the OAuth app's exactly.",
  ),
  config: body.config.describe('e.g. web-crawler {"startUrl": "https://docs.example.com"}.'),
  documentLimit: body.documentLimit.describe("Most documents to sync; 500 to 1000 is a good start."),
});

const outputSchema = z.object({
  id: z.string(),
  provider: Provider,
  authorization: Authorization.nullable().describe("OAuth: the link the user opens to connect."),
  // What a model acts on; the rest of the connector and the run (picker, timestamps, counts) still comes along.
  connector: Connector.pick({ id: true, namespace: true, account: true, documentLimit: true })
    .optional()
    .describe("The connector as created."),
  run: SyncRun.pick({ id: true, error: true, system: true })
    .nullable()
    .optional()
    .describe("The sync that started."),
});

export const connectSource = defineTool({
  name: "connect_source",
  title: "Connect a source",
  description: [
    "Sync an external source into this memory, only when the user asks.",
    "OAuth providers return a link for the user to open (valid one hour; then call again).",
    "Others (web-crawler with config {startUrl}, s3, granola) start syncing at once; documents become searchable as processed.",
    "An error names the field to fix.",
  ].join(" "),
  inputSchema,
  outputSchema,
  annotations: {
    title: "Connect a source",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true,
  },
  async handler(args, ctx) {
    const opts = { signal: ctx.extra.signal };
    const created = await ctx.ns.connectors.create(args, opts);
    if (isOAuthProvider(args.provider) || created.authorization) {
      const auth = created.authorization;
      return {
        structured: { id: created.id, provider: args.provider, authorization: auth ?? null },
        text: auth
          ? `Ask the user to open this link to connect ${args.provider} (it expires ${auth.expiresAt}): ${auth.url}\nThe connector (${created.id}) appears once they finish.`
          : `Connector ${created.id} for ${args.provider} was created.`,
      };
    }
    const connector = await ctx.ns.connectors.get(created.id, { include: ["syncs"] }, opts);
    const run = connector.latestRun ?? connector.syncs?.[0] ?? null;
    return {
      structured: { id: created.id, provider: args.provider, authorization: null, connector, run },
      text: `Connected ${args.provider} as ${created.id}; ${run ? `sync ${run.id} is ${run.system.status}` : "the first sync is starting"}. Synced documents become searchable as they are processed (list shows their status).`,
    };
  },
});
