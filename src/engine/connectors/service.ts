import { createHash } from "node:crypto";
import type {
  Connector,
  CreateConnectorBody,
  CreateConnectorResponse,
  DeleteConnectorResponse,
  PatchConnectorBody,
  SyncResponse,
} from "../../api/index.js";
import {
  CONNECTOR_SYNC_INTERVAL_DEFAULT_SECONDS,
  isOAuthProvider,
  OAUTH_LINK_TTL_MS,
} from "../../api/index.js";
import type { EngineContext } from "../context.js";
import { ConflictError, InputError, NotFoundError } from "../errors.js";
import { documentWrite } from "../services/documents.js";
import { screensSecrets, screenText } from "../services/screening.js";
import { connectorItems } from "../store/connector-items.js";
import {
  type ConnectorRow,
  connectConnector,
  consumeOAuthState,
  createConnector,
  deleteConnector,
  dropConnectorItems,
  dueConnectorIds,
  expireConnector,
  getConnectorRow,
  listConnectorRows,
  queueSync,
  saveCredentials,
  updateConnectorSettings,
} from "../store/connectors.js";
import { type Db, parseJson } from "../store/db.js";
import { storeConnectorDocument } from "../store/documents.js";
import type { FailureMark } from "../store/job-failures.js";
import type { JobRow } from "../store/jobs.js";
import { getNamespace, type NamespaceRow } from "../store/namespaces.js";
import {
  emptyCounts,
  finishRun,
  getRun,
  RECENT_RUNS,
  recentRuns,
  startRun,
  toSyncRun,
} from "../store/sync-runs.js";
import { redactConfig } from "./config.js";
import { connectorFetch } from "./fetch.js";
import { codeChallengeS256, createCodeVerifier, createState, isExpired } from "./oauth.js";
import { createProviderRegistry, type ProviderRegistry } from "./registry.js";
import type { OAuthTokens, SyncItemDocument } from "./types.js";

/**
 * Connectors in the engine: create (OAuth link or config), the OAuth callback, reads, changes and
 * sync runs. A sync is a durable job ("connector-sync"), so any process on the data directory runs
 * it and a crash resumes it; at most one run per connector is queued or running (a unique index),
 * a second trigger answers 409. A run upserts documents by `connector:<id>:<externalId>`, counts
 * what it did, and deletes the documents whose items vanished from the source.
 */

export const SYNC_JOB = "connector-sync";
/**
 * How often the processing loops look for connectors whose scheduled sync is due (the shortest
 * interval that takes effect); MEMCTX_CONNECTOR_CHECK_MS overrides it.
 */
export const CONNECTOR_SCHEDULE_CHECK_MS = 60_000;
/** When the create body sets none; the spec advises starting with 500 to 1000. */
export const CONNECTOR_DOCUMENT_LIMIT_DEFAULT = 1000;
/** Failed items kept on a run; the counts still count all. */
const FAILED_ITEMS_KEPT = 100;

const services = new WeakMap<EngineContext, ConnectorService>();

/** The engine's one ConnectorService (it registers the sync job handler on first use). */
export function connectorService(ctx: EngineContext): ConnectorService {
  let service = services.get(ctx);
  if (!service) {
    service = new ConnectorService(ctx);
    services.set(ctx, service);
  }
  return service;
}

export class ConnectorService {
  private readonly db: Db;
  readonly providers: ProviderRegistry;

  constructor(
    private readonly ctx: EngineContext,
    providers?: ProviderRegistry,
  ) {
    this.db = ctx.db;
    this.providers =
      providers ??
      createProviderRegistry({
        env: process.env,
        fetch: connectorFetch({ allowPrivateNetwork: ctx.allowPrivateNetwork }),
      });
    ctx.workers.register(SYNC_JOB, (job, signal) => this.runJob(job, signal), {
      mark: (job) => this.jobFailed(job),
    });
    ctx.workers.every(Number(process.env.MEMCTX_CONNECTOR_CHECK_MS) || CONNECTOR_SCHEDULE_CHECK_MS, () =>
      this.queueDueSyncs(),
    );
  }

  /**
   * Queues a run of every connector whose scheduled sync is due (its interval since its last run).
   * Several processes may look at once: the unique index on active runs lets one queue it, the
   * others get the same 409 as a second trigger, and pass. Returns how many this call queued.
   */
  async queueDueSyncs(at = new Date()): Promise<number> {
    let queued = 0;
    for (const id of await dueConnectorIds(this.db, at.toISOString())) {
      if ((await queueSync(this.db, id, SYNC_JOB)) !== null) queued++;
    }
    if (queued > 0) this.ctx.queue.wake();
    return queued;
  }

  /**
   * In the caller's namespace, made in the same transaction: a refused create (a bad config)
   * creates nothing.
   */
  async create(
    organizationId: string,
    name: string,
    body: CreateConnectorBody,
  ): Promise<CreateConnectorResponse> {
    // Everything that can refuse the create is decided before the store makes anything.
    const provider = this.providers[body.provider];
    const config = provider.validateConfig(body.config ?? {});
    const base = {
      provider: body.provider,
      config: JSON.stringify(config),
      selection: null,
      document_limit: body.documentLimit ?? CONNECTOR_DOCUMENT_LIMIT_DEFAULT,
      sync_interval_seconds: body.syncIntervalSeconds ?? CONNECTOR_SYNC_INTERVAL_DEFAULT_SECONDS,
    };
    // GitHub also takes a personal access token in config: then there is no OAuth dance.
    const tokenInConfig = body.provider === "github" && typeof config.token === "string";
    if (isOAuthProvider(body.provider) && !tokenInConfig) {
      if (!body.redirectUrl) {
        throw new InputError("redirectUrl", `is required for ${body.provider} (an OAuth provider)`);
      }
      const state = createState();
      const verifier = createCodeVerifier();
      const url = provider.authorizationUrl!({
        state,
        redirectUrl: body.redirectUrl,
        codeChallenge: codeChallengeS256(verifier),
      });
      const expiresAt = new Date(Date.now() + OAUTH_LINK_TTL_MS).toISOString();
      const row = await createConnector(
        this.db,
        organizationId,
        name,
        {
          ...base,
          state: "pending",
          oauth_state: state,
          code_verifier: verifier,
          redirect_url: body.redirectUrl,
          authorization_url: url,
          authorization_expires_at: expiresAt,
        },
        SYNC_JOB,
      );
      return { id: row.id, authorization: { url, expiresAt } };
    }
    // A config provider is connected at once and starts syncing (spec, Connector states).
    const row = await createConnector(
      this.db,
      organizationId,
      name,
      {
        ...base,
        state: "connected",
        oauth_state: null,
        code_verifier: null,
        redirect_url: null,
        authorization_url: null,
        authorization_expires_at: null,
      },
      SYNC_JOB,
    );
    this.ctx.queue.wake();
    return { id: row.id, authorization: null };
  }

  /** The OAuth redirect: exchanges the code of a pending connector, connects it and starts its first sync. */
  async completeAuthorization(p: { state?: string; code?: string; error?: string }): Promise<Connector> {
    if (!p.state) throw new InputError("state", "is required");
    // The state is consumed before the code exchange, atomically: a second callback with the same
    // state (a replay, a double click, an attacker holding another code) finds nothing.
    const row = await consumeOAuthState(this.db, p.state);
    if (!row) {
      throw new InputError("state", "unknown or already used; create the connector again");
    }
    // From here on the link is spent: any failure leaves the connector expired, never half-pending.
    const fail = async (error: InputError) => {
      await expireConnector(this.db, row.id);
      return error;
    };
    if (Date.parse(row.authorization_expires_at ?? "") <= Date.now()) {
      throw await fail(
        new InputError(
          "state",
          "the authorization link expired (one hour); create the connector again",
          "Authorization expired",
        ),
      );
    }
    if (p.error) {
      throw await fail(new InputError("error", `the provider answered: ${p.error}`, "Authorization refused"));
    }
    if (!p.code) throw await fail(new InputError("code", "is required"));
    const provider = this.providers[row.provider];
    let tokens: OAuthTokens;
    try {
      tokens = await provider.exchangeCode!({
        code: p.code,
        redirectUrl: row.redirect_url ?? "",
        codeVerifier: row.code_verifier ?? "",
      });
    } catch (error) {
      throw await fail(new InputError("code", (error as Error).message, "Authorization failed"));
    }
    if ((await connectConnector(this.db, row.id, tokens, SYNC_JOB)) === null) throw syncActive();
    this.ctx.queue.wake();
    return await this.toRecord((await getConnectorRow(this.db, row.id))!);
  }

  /** The organization's connectors, or one namespace's (none for a namespace never written to). */
  async list(organizationId: string, namespace?: NamespaceRow | null): Promise<Connector[]> {
    if (namespace === null) return [];
    const out: Connector[] = [];
    for (const row of await listConnectorRows(this.db, organizationId, namespace?.id))
      out.push(await this.toRecord(row));
    return out;
  }

  async get(namespace: NamespaceRow | null, id: string, include: string[] = []): Promise<Connector> {
    return await this.toRecord(await this.find(namespace, id), {
      syncs: include.includes("syncs"),
      picker: include.includes("picker"),
    });
  }

  async update(namespace: NamespaceRow | null, id: string, body: PatchConnectorBody): Promise<Connector> {
    const row = await this.find(namespace, id);
    await updateConnectorSettings(this.db, row.id, {
      selection: body.selection ? JSON.stringify(body.selection) : null,
      documentLimit: body.documentLimit ?? null,
      syncIntervalSeconds: body.syncIntervalSeconds ?? null,
    });
    return await this.toRecord((await getConnectorRow(this.db, row.id))!);
  }

  async sync(namespace: NamespaceRow | null, id: string): Promise<SyncResponse> {
    const row = await this.find(namespace, id);
    const run = await queueSync(this.db, row.id, SYNC_JOB);
    if (run === null) throw syncActive();
    this.ctx.queue.wake();
    return { id: row.id, runId: run, status: "queued" };
  }

  async remove(
    namespace: NamespaceRow | null,
    id: string,
    deleteImported: boolean,
  ): Promise<DeleteConnectorResponse> {
    const row = await this.find(namespace, id);
    const documentsDeleted = await deleteConnector(this.db, row, {
      withDocuments: deleteImported,
      syncJobKind: SYNC_JOB,
    });
    return { id: row.id, deleted: true, documentsDeleted };
  }

  /** A connected connector of this namespace; any other (pending, another namespace's) is not found. */
  private async find(namespace: NamespaceRow | null, id: string): Promise<ConnectorRow> {
    const row = namespace && (await getConnectorRow(this.db, id));
    if (
      !row ||
      !namespace ||
      row.namespace_id !== namespace.id ||
      row.organization_id !== namespace.organization_id ||
      row.state !== "connected"
    ) {
      throw new NotFoundError("Connector");
    }
    return row;
  }

  private async toRecord(
    row: ConnectorRow,
    include: { syncs?: boolean; picker?: boolean } = {},
  ): Promise<Connector> {
    return await toConnector(this.db, row, (await getNamespace(this.db, row.namespace_id))!.name, include);
  }

  /** A sync job that failed for good ends its run `failed`. */
  private jobFailed(job: JobRow): FailureMark | undefined {
    const { runId } = parseJson<{ runId?: string }>(job.payload, {});
    return runId ? { syncRun: runId } : undefined;
  }

  /** One sync run, start to end. Source errors fail the run (nothing is deleted then) without retry. */
  private async runJob(job: JobRow, signal: AbortSignal): Promise<void> {
    const { connectorId, runId } = parseJson<{ connectorId?: string; runId?: string }>(job.payload, {});
    const run = runId ? await getRun(this.db, runId) : undefined;
    const connector = connectorId ? await getConnectorRow(this.db, connectorId) : undefined;
    if (!run || !connector || run.status === "done" || run.status === "failed") return;
    await startRun(this.db, run.id);
    const counts = emptyCounts();
    const failedItems: { item: string; reason: string }[] = [];
    try {
      await this.syncConnector(connector, signal, counts, failedItems);
      if (await getConnectorRow(this.db, connector.id))
        await finishRun(this.db, run.id, { status: "done", counts, failedItems });
    } catch (error) {
      if (signal.aborted) throw error; // stopped: the job is claimed again and the run resumes
      if (!(await getConnectorRow(this.db, connector.id))) return;
      await finishRun(this.db, run.id, {
        status: "failed",
        error: (error as Error).message,
        counts,
        failedItems,
      });
    } finally {
      this.ctx.queue.wake();
    }
  }

  private async syncConnector(
    connector: ConnectorRow,
    signal: AbortSignal,
    counts: ReturnType<typeof emptyCounts>,
    failedItems: { item: string; reason: string }[],
  ): Promise<void> {
    const provider = this.providers[connector.provider];
    let credentials = parseJson<OAuthTokens | null>(connector.credentials, null);
    if (credentials && provider.refresh && isExpired(credentials)) {
      credentials = await provider.refresh(credentials);
      await saveCredentials(this.db, connector.id, credentials);
    }
    const items = await connectorItems(this.db, connector.id);
    const previous = new Map(items.map((i) => [i.external_id, i.version]));
    const documentOf = new Map(items.map((i) => [i.external_id, i.document_id]));
    const limit = connector.document_limit ?? CONNECTOR_DOCUMENT_LIMIT_DEFAULT;
    const ns = (await getNamespace(this.db, connector.namespace_id))!;
    const seen = new Set<string>();
    const keep = new Set<string>(); // failed this run: not deleted, tried again next run
    let documents = 0;
    const fail = (item: string, reason: string) => {
      counts.failed++;
      keep.add(item);
      if (failedItems.length < FAILED_ITEMS_KEPT) failedItems.push({ item, reason });
    };

    for await (const item of provider.sync({
      config: parseJson<Record<string, unknown>>(connector.config, {}),
      selection: parseJson<Record<string, unknown> | null>(connector.selection, null),
      credentials,
      documentLimit: limit,
      previous,
      fetch: connectorFetch({ allowPrivateNetwork: this.ctx.allowPrivateNetwork, signal }),
      signal,
    })) {
      signal.throwIfAborted();
      if (!(await getConnectorRow(this.db, connector.id))) return; // disconnected meanwhile
      if (item.kind !== "document") {
        if (item.kind === "skipped") counts.skipped++;
        else fail(item.item, item.reason);
        continue;
      }
      if (seen.has(item.externalId) || documents >= limit) continue;
      seen.add(item.externalId);
      documents++;
      const unchanged = previous.get(item.externalId) === item.version && documentOf.get(item.externalId);
      if (unchanged) {
        counts.unchanged++;
        continue;
      }
      if (previous.get(item.externalId) === item.version && item.content === "") {
        // Known unchanged by the source, but its document was deleted here: nothing to restore it from.
        continue;
      }
      const existed = previous.has(item.externalId);
      await this.upsertDocument(connector, ns, item);
      if (existed) counts.updated++;
      else counts.added++;
    }

    // Everything the source no longer has (and that did not just fail) goes.
    const gone = items
      .filter((i) => !seen.has(i.external_id) && !keep.has(i.external_id))
      .map((i) => ({ externalId: i.external_id, documentId: i.document_id }));
    await dropConnectorItems(this.db, connector, gone);
    counts.deleted += gone.length;
  }

  /** Stores an item's document and records it as the connector's item, in one store operation. */
  private async upsertDocument(
    connector: ConnectorRow,
    ns: NamespaceRow,
    item: SyncItemDocument,
  ): Promise<string> {
    // A source's text is stored as the user's own notes are: less its secrets (services/screening.ts).
    const { document } = screenText(
      {
        content: item.content,
        customId: customId(connector.id, item.externalId),
        metadata: { ...item.metadata, connectorId: connector.id, externalId: item.externalId },
        source: connector.provider,
        title: item.title,
        connectorId: connector.id,
      },
      screensSecrets(this.ctx.secretScreening, ns),
      { isUrl: false },
    );
    return await storeConnectorDocument(this.db, ns.id, documentWrite(document), {
      connectorId: connector.id,
      externalId: item.externalId,
      version: item.version,
      type: item.type,
      url: item.url,
    });
  }
}

/** 409: a connector runs one sync at a time. */
const syncActive = () =>
  new ConflictError("A sync is already running", "wait for the running sync to finish (see latestRun)");

/** `connector:<id>:<externalId>`, hashed when it would pass the 255-character id limit. */
export function customId(connectorId: string, externalId: string): string {
  const id = `connector:${connectorId}:${externalId}`;
  if (id.length <= 255) return id;
  return `connector:${connectorId}:sha256:${createHash("sha256").update(externalId).digest("hex")}`;
}

/** The connector as API callers see it: secrets in its config redacted, its latest run (and recent ones). */
export async function toConnector(
  db: Db,
  row: ConnectorRow,
  namespace: string,
  include: { syncs?: boolean; picker?: boolean } = {},
): Promise<Connector> {
  const [latest] = await recentRuns(db, row.id, 1);
  const active = latest?.status === "queued" || latest?.status === "running";
  const last = latest ? (latest.finished_at ?? latest.created_at) : row.updated_at;
  const nextSyncAt =
    row.state === "connected" && row.sync_interval_seconds > 0 && !active
      ? new Date(Date.parse(last) + row.sync_interval_seconds * 1000).toISOString()
      : null;
  return {
    id: row.id,
    provider: row.provider,
    namespace,
    account: row.account,
    config: redactConfig(parseJson<Record<string, unknown> | null>(row.config, null)),
    selection: parseJson<Record<string, unknown> | null>(row.selection, null),
    documentLimit: row.document_limit,
    syncIntervalSeconds: row.sync_interval_seconds,
    nextSyncAt,
    latestRun: latest ? toSyncRun(latest) : null,
    authorization: null,
    ...(include.syncs ? { syncs: (await recentRuns(db, row.id, RECENT_RUNS)).map(toSyncRun) } : {}),
    // The embedded engine hosts no picker: what a connector syncs is changed with PATCH selection.
    ...(include.picker ? { picker: null } : {}),
    system: { createdAt: row.created_at, updatedAt: row.updated_at },
  };
}
