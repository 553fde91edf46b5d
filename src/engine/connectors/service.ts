import { createHash } from "node:crypto";
import type {
  Connector,
  CreateConnectorBody,
  CreateConnectorResponse,
  DeleteConnectorResponse,
  PatchConnectorBody,
  SyncResponse,
} from "../../api/index.js";
import { isOAuthProvider, OAUTH_LINK_TTL_MS, SERVER_SETTING_MISSING } from "../../api/index.js";
import type { EngineContext } from "../context.js";
import { HttpError, notFound } from "../errors.js";
import { type Db, now, parseJson, transaction } from "../store/db.js";
import { addDocument, deleteDocuments } from "../store/documents.js";
import { enqueueJob, type JobRow } from "../store/jobs.js";
import { ensureNamespace, findNamespace, type NamespaceRow } from "../store/namespaces.js";
import type { OrganizationRow } from "../store/organizations.js";
import { ConnectorInputError, ConnectorSetupError } from "./errors.js";
import { connectorFetch } from "./fetch.js";
import { codeChallengeS256, createCodeVerifier, createState, isExpired } from "./oauth.js";
import { createProviderRegistry, type ProviderRegistry } from "./registry.js";
import {
  type ConnectorRow,
  connectorItems,
  consumeOAuthState,
  deleteConnectorItem,
  emptyCounts,
  expireConnector,
  finishRun,
  getConnectorRow,
  getRun,
  insertConnector,
  insertRun,
  listConnectorRows,
  saveCredentials,
  toConnector,
  upsertConnectorItem,
} from "./store.js";
import type { OAuthTokens, SyncItemDocument } from "./types.js";

/**
 * Connectors in the engine: create (OAuth link or config), the OAuth callback, reads, changes and
 * sync runs. A sync is a durable job ("connector-sync"), so any process on the data directory runs
 * it and a crash resumes it; at most one run per connector is queued or running (a unique index),
 * a second trigger answers 409. A run upserts documents by `connector:<id>:<externalId>`, counts
 * what it did, and deletes the documents whose items vanished from the source.
 */

export const SYNC_JOB = "connector-sync";
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
    ctx.workers.register(
      SYNC_JOB,
      (job, signal) => this.runJob(job, signal),
      (job, message) => this.jobFailed(job, message),
    );
  }

  create(org: OrganizationRow, namespace: string, body: CreateConnectorBody): CreateConnectorResponse {
    const provider = this.providers[body.provider];
    const config = inputError(() => provider.validateConfig(body.config ?? {}));
    const base = {
      organization_id: org.id,
      provider: body.provider,
      config: JSON.stringify(config),
      selection: null,
      document_limit: body.documentLimit ?? CONNECTOR_DOCUMENT_LIMIT_DEFAULT,
    };
    // GitHub also takes a personal access token in config: then there is no OAuth dance.
    const tokenInConfig = body.provider === "github" && typeof config.token === "string";
    if (isOAuthProvider(body.provider) && !tokenInConfig) {
      if (!body.redirectUrl)
        throw new HttpError(
          400,
          "Invalid request",
          `redirectUrl: is required for ${body.provider} (an OAuth provider)`,
        );
      const state = createState();
      const verifier = createCodeVerifier();
      const url = inputError(() =>
        provider.authorizationUrl!({
          state,
          redirectUrl: body.redirectUrl!,
          codeChallenge: codeChallengeS256(verifier),
        }),
      );
      const expiresAt = new Date(Date.now() + OAUTH_LINK_TTL_MS).toISOString();
      const row = transaction(this.db, () =>
        insertConnector(this.db, {
          ...base,
          namespace_id: ensureNamespace(this.db, org.id, namespace).id,
          state: "pending",
          oauth_state: state,
          code_verifier: verifier,
          redirect_url: body.redirectUrl!,
          authorization_url: url,
          authorization_expires_at: expiresAt,
        }),
      );
      return { id: row.id, authorization: { url, expiresAt } };
    }
    // A config provider is connected at once and starts syncing (spec, Connector states).
    const row = transaction(this.db, () => {
      const created = insertConnector(this.db, {
        ...base,
        namespace_id: ensureNamespace(this.db, org.id, namespace).id,
        state: "connected",
        oauth_state: null,
        code_verifier: null,
        redirect_url: null,
        authorization_url: null,
        authorization_expires_at: null,
      });
      this.queueRun(created.id);
      return created;
    });
    this.ctx.queue.wake();
    return { id: row.id, authorization: null };
  }

  /** The OAuth redirect: exchanges the code of a pending connector, connects it and starts its first sync. */
  async completeAuthorization(p: { state?: string; code?: string; error?: string }): Promise<Connector> {
    if (!p.state) throw new HttpError(400, "Invalid request", "state: is required");
    // The state is consumed before the code exchange, atomically: a second callback with the same
    // state (a replay, a double click, an attacker holding another code) finds nothing.
    const row = consumeOAuthState(this.db, p.state);
    if (!row) {
      throw new HttpError(
        400,
        "Invalid request",
        "state: unknown or already used; create the connector again",
      );
    }
    // From here on the link is spent: any failure leaves the connector expired, never half-pending.
    const fail = (error: HttpError) => {
      expireConnector(this.db, row.id);
      return error;
    };
    if (Date.parse(row.authorization_expires_at ?? "") <= Date.now()) {
      throw fail(
        new HttpError(
          400,
          "Authorization expired",
          "the authorization link expired (one hour); create the connector again",
        ),
      );
    }
    if (p.error) throw fail(new HttpError(400, "Authorization refused", `the provider answered: ${p.error}`));
    if (!p.code) throw fail(new HttpError(400, "Invalid request", "code: is required"));
    const provider = this.providers[row.provider];
    let tokens: OAuthTokens;
    try {
      tokens = await provider.exchangeCode!({
        code: p.code,
        redirectUrl: row.redirect_url ?? "",
        codeVerifier: row.code_verifier ?? "",
      });
    } catch (error) {
      throw fail(new HttpError(400, "Authorization failed", (error as Error).message));
    }
    transaction(this.db, () => {
      saveCredentials(this.db, row.id, tokens);
      this.db
        .prepare(
          "UPDATE connectors SET state = 'connected', oauth_state = NULL, code_verifier = NULL, authorization_url = NULL, updated_at = ? WHERE id = ?",
        )
        .run(now(), row.id);
      this.queueRun(row.id);
    });
    this.ctx.queue.wake();
    return this.toRecord(getConnectorRow(this.db, row.id)!);
  }

  list(org: OrganizationRow, namespace?: string): Connector[] {
    let namespaceId: string | undefined;
    if (namespace !== undefined) {
      const ns = findNamespace(this.db, org.id, namespace);
      if (!ns) return [];
      namespaceId = ns.id;
    }
    return listConnectorRows(this.db, org.id, namespaceId).map((row) => this.toRecord(row));
  }

  get(org: OrganizationRow, namespace: string, id: string, include: string[] = []): Connector {
    return this.toRecord(this.find(org, namespace, id), {
      syncs: include.includes("syncs"),
      picker: include.includes("picker"),
    });
  }

  update(org: OrganizationRow, namespace: string, id: string, body: PatchConnectorBody): Connector {
    const row = this.find(org, namespace, id);
    this.db
      .prepare(
        "UPDATE connectors SET selection = COALESCE(?, selection), document_limit = COALESCE(?, document_limit), updated_at = ? WHERE id = ?",
      )
      .run(body.selection ? JSON.stringify(body.selection) : null, body.documentLimit ?? null, now(), row.id);
    return this.toRecord(getConnectorRow(this.db, row.id)!);
  }

  sync(org: OrganizationRow, namespace: string, id: string): SyncResponse {
    const row = this.find(org, namespace, id);
    const run = transaction(this.db, () => this.queueRun(row.id));
    this.ctx.queue.wake();
    return { id: row.id, runId: run, status: "queued" };
  }

  remove(
    org: OrganizationRow,
    namespace: string,
    id: string,
    deleteImported: boolean,
  ): DeleteConnectorResponse {
    const row = this.find(org, namespace, id);
    const documentsDeleted = transaction(this.db, () => {
      let count = 0;
      if (deleteImported) {
        const ids = (
          this.db
            .prepare("SELECT id FROM documents WHERE connector_id = ? AND namespace_id = ?")
            .all(row.id, row.namespace_id) as { id: string }[]
        ).map((d) => d.id);
        count = deleteDocuments(this.db, row.namespace_id, ids).count;
      } else {
        this.db.prepare("UPDATE documents SET connector_id = NULL WHERE connector_id = ?").run(row.id);
      }
      // Runs, items and a queued sync job go with it; a running sync notices and stops.
      this.db
        .prepare(
          "DELETE FROM jobs WHERE kind = ? AND json_extract(payload, '$.connectorId') = ? AND state = 'queued'",
        )
        .run(SYNC_JOB, row.id);
      this.db.prepare("DELETE FROM connectors WHERE id = ?").run(row.id);
      return count;
    });
    return { id: row.id, deleted: true, documentsDeleted };
  }

  private find(org: OrganizationRow, namespace: string, id: string): ConnectorRow {
    const ns = findNamespace(this.db, org.id, namespace);
    const row = ns && getConnectorRow(this.db, id);
    if (
      !row ||
      !ns ||
      row.namespace_id !== ns.id ||
      row.organization_id !== org.id ||
      row.state !== "connected"
    ) {
      throw notFound("Connector");
    }
    return row;
  }

  private toRecord(row: ConnectorRow, include: { syncs?: boolean; picker?: boolean } = {}): Connector {
    const ns = this.db.prepare("SELECT name FROM namespaces WHERE id = ?").get(row.namespace_id) as {
      name: string;
    };
    return toConnector(this.db, row, ns.name, include);
  }

  /** A queued run and its job, in the caller's transaction; 409 while another run is queued or running. */
  private queueRun(connectorId: string): string {
    let runId: string;
    try {
      runId = insertRun(this.db, connectorId).id;
    } catch (error) {
      if (/UNIQUE constraint failed: sync_runs\.connector_id/.test((error as Error).message)) {
        throw new HttpError(
          409,
          "A sync is already running",
          "wait for the running sync to finish (see latestRun)",
        );
      }
      throw error;
    }
    enqueueJob(this.db, { kind: SYNC_JOB, payload: { connectorId, runId }, maxAttempts: 3 });
    return runId;
  }

  private jobFailed(job: JobRow, message: string): void {
    const { runId } = parseJson<{ runId?: string }>(job.payload, {});
    const run = runId ? getRun(this.db, runId) : undefined;
    if (run && (run.status === "queued" || run.status === "running")) {
      finishRun(this.db, run.id, {
        status: "failed",
        error: message,
        counts: emptyCounts(),
        failedItems: [],
      });
    }
  }

  /** One sync run, start to end. Source errors fail the run (nothing is deleted then) without retry. */
  private async runJob(job: JobRow, signal: AbortSignal): Promise<void> {
    const { connectorId, runId } = parseJson<{ connectorId?: string; runId?: string }>(job.payload, {});
    const run = runId ? getRun(this.db, runId) : undefined;
    const connector = connectorId ? getConnectorRow(this.db, connectorId) : undefined;
    if (!run || !connector || run.status === "done" || run.status === "failed") return;
    this.db
      .prepare("UPDATE sync_runs SET status = 'running', started_at = COALESCE(started_at, ?) WHERE id = ?")
      .run(now(), run.id);
    const counts = emptyCounts();
    const failedItems: { item: string; reason: string }[] = [];
    try {
      await this.syncConnector(connector, signal, counts, failedItems);
      if (getConnectorRow(this.db, connector.id))
        finishRun(this.db, run.id, { status: "done", counts, failedItems });
    } catch (error) {
      if (signal.aborted) throw error; // stopped: the job is claimed again and the run resumes
      if (!getConnectorRow(this.db, connector.id)) return;
      finishRun(this.db, run.id, { status: "failed", error: (error as Error).message, counts, failedItems });
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
      saveCredentials(this.db, connector.id, credentials);
    }
    const items = connectorItems(this.db, connector.id);
    const previous = new Map(items.map((i) => [i.external_id, i.version]));
    const documentOf = new Map(items.map((i) => [i.external_id, i.document_id]));
    const limit = connector.document_limit ?? CONNECTOR_DOCUMENT_LIMIT_DEFAULT;
    const ns = this.db
      .prepare("SELECT * FROM namespaces WHERE id = ?")
      .get(connector.namespace_id) as unknown as NamespaceRow;
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
      if (!getConnectorRow(this.db, connector.id)) return; // disconnected meanwhile
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
      transaction(this.db, () => {
        const id = this.upsertDocument(connector, ns, item);
        upsertConnectorItem(this.db, connector.id, item.externalId, id, item.version);
      });
      if (existed) counts.updated++;
      else counts.added++;
    }

    // Everything the source no longer has (and that did not just fail) goes.
    transaction(this.db, () => {
      for (const { external_id, document_id } of items) {
        if (seen.has(external_id) || keep.has(external_id)) continue;
        if (document_id) deleteDocuments(this.db, connector.namespace_id, [document_id]);
        deleteConnectorItem(this.db, connector.id, external_id);
        counts.deleted++;
      }
    });
  }

  private upsertDocument(connector: ConnectorRow, ns: NamespaceRow, item: SyncItemDocument): string {
    const { id } = addDocument(this.db, ns, {
      content: item.content,
      customId: customId(connector.id, item.externalId),
      metadata: { ...item.metadata, connectorId: connector.id, externalId: item.externalId },
      source: connector.provider,
      title: item.title,
      connectorId: connector.id,
    });
    // The provider knows the type and URL; processing keeps them for connector documents.
    this.db.prepare("UPDATE documents SET type = ?, url = ? WHERE id = ?").run(item.type, item.url, id);
    return id;
  }
}

/** `connector:<id>:<externalId>`, hashed when it would pass the 255-character id limit. */
export function customId(connectorId: string, externalId: string): string {
  const id = `connector:${connectorId}:${externalId}`;
  if (id.length <= 255) return id;
  return `connector:${connectorId}:sha256:${createHash("sha256").update(externalId).digest("hex")}`;
}

function inputError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof ConnectorSetupError) throw new HttpError(400, SERVER_SETTING_MISSING, error.message);
    if (error instanceof ConnectorInputError) throw new HttpError(400, "Invalid request", error.message);
    throw error;
  }
}
