import { z } from "zod";
import {
  Authorization,
  Connector,
  CreateConnectorBody,
  isOAuthProvider,
  Provider,
  SyncRun,
} from "../../api/index.js";
import { defineTool, toolError } from "./define.js";

/** The contract's create body, each field described for a model. */
const body = CreateConnectorBody.shape;
const inputSchema = z.strictObject({
  action: z
    .enum(["connect", "status", "sync"])
    .default("connect")
    .describe("status: of id (or all); sync: re-sync id."),
  id: z.string().min(1).optional().describe("Connector id (status, sync)."),
  provider: body.provider
    .optional()
    .describe("OAuth (the user signs in): notion, google-drive, onedrive, gmail, github; else set config."),
  redirectUrl: body.redirectUrl.describe(
    "OAuth: where the user is sent back; must match the OAuth app's exactly.",
  ),
  config: body.config.describe('e.g. web-crawler {"startUrl": "https://docs.example.com"}.'),
  documentLimit: body.documentLimit.describe("Most documents to sync; 500 to 1000 is a good start."),
});

// What a model acts on; the rest of the connector and the run (picker, timestamps, counts) still comes along.
const ConnectorSummary = Connector.pick({ id: true, namespace: true, account: true, documentLimit: true });

const outputSchema = z.object({
  id: z.string().optional(),
  provider: Provider.optional(),
  authorization: Authorization.nullable().optional().describe("OAuth: the link the user opens to connect."),
  connector: ConnectorSummary.optional(),
  run: SyncRun.pick({ id: true, error: true, system: true }).nullable().optional().describe("Latest sync."),
  connectors: z.array(Connector.pick({ id: true, provider: true })).optional(),
});

const runLine = (run: SyncRun | null | undefined) =>
  run
    ? `sync ${run.id} ${run.system.status}${
        run.counts
          ? ` (${Object.entries(run.counts)
              .map(([k, n]) => `${k} ${n}`)
              .join(", ")})`
          : ""
      }${run.error ? `: ${run.error}` : ""}`
    : "no sync yet";

export const connectSource = defineTool({
  name: "connect_source",
  title: "Connect a source",
  description: [
    "Sync an external source into this memory, only when the user asks; action status or sync checks or re-syncs one.",
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
  async handler({ action, id, ...args }, ctx) {
    const opts = { signal: ctx.extra.signal };
    if (action === "status" && id === undefined) {
      const { connectors } = await ctx.ns.connectors.list(opts);
      return {
        structured: { connectors },
        text: connectors.length
          ? connectors.map((c) => `- ${c.id} (${c.provider}): ${runLine(c.latestRun)}`).join("\n")
          : "No connectors in this namespace; connect one with action connect.",
      };
    }
    if (action !== "connect") {
      if (id === undefined)
        return toolError(`action ${action} needs the connector's id (status without id lists them).`);
      if (action === "sync") await ctx.ns.connectors.sync(id, opts);
      const connector = await ctx.ns.connectors.get(id, { include: ["syncs"] }, opts);
      const run = connector.latestRun ?? connector.syncs?.[0] ?? null;
      return {
        structured: { id, provider: connector.provider, connector, run },
        text: `${action === "sync" ? "Re-sync started. " : ""}Connector ${id} (${connector.provider}): ${runLine(run)}.`,
      };
    }
    const { provider } = args;
    if (provider === undefined) return toolError("action connect needs provider.");
    const created = await ctx.ns.connectors.create({ ...args, provider }, opts);
    if (isOAuthProvider(provider) || created.authorization) {
      const auth = created.authorization;
      return {
        structured: { id: created.id, provider, authorization: auth ?? null },
        text: auth
          ? `Ask the user to open this link to connect ${provider} (it expires ${auth.expiresAt}): ${auth.url}\nThe connector (${created.id}) appears once they finish.`
          : `Connector ${created.id} for ${provider} was created.`,
      };
    }
    const connector = await ctx.ns.connectors.get(created.id, { include: ["syncs"] }, opts);
    const run = connector.latestRun ?? connector.syncs?.[0] ?? null;
    return {
      structured: { id: created.id, provider, authorization: null, connector, run },
      text: `Connected ${provider} as ${created.id}; ${run ? `sync ${run.id} is ${run.system.status}` : "the first sync is starting"}. Synced documents become searchable as they are processed (list shows their status).`,
    };
  },
});
