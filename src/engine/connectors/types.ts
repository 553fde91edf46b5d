import type { DocumentType, Metadata, Provider } from "../../api/index.js";

/**
 * The one interface every connector provider implements (agreed in the team brief). A provider
 * knows its source's API; the engine (connectors/service.ts) owns runs, documents and deletions.
 */

/** Tokens of an OAuth connection, as stored with the connector. */
export interface OAuthTokens {
  accessToken: string;
  refreshToken?: string | null;
  /** ISO time the access token stops working; null when the provider does not say. */
  expiresAt?: string | null;
  tokenType?: string | null;
  scope?: string | null;
  /** The connected account (login, e-mail or workspace name) when the provider tells it. */
  account?: string | null;
}

export interface SyncItemDocument {
  kind: "document";
  externalId: string;
  content: string;
  title: string | null;
  url: string | null;
  type: DocumentType;
  metadata: Metadata;
  /** ETag, Last-Modified, blob sha or a content hash. */
  version: string;
}

export type SyncItem = SyncItemDocument | { kind: "skipped" | "failed"; item: string; reason: string };

/** A fetch for the source's API: SSRF-safe and bounded in size and time (see connectors/fetch.ts). */
export type ConnectorFetch = (url: string, init?: RequestInit) => Promise<Response>;

export interface SyncContext {
  config: Record<string, unknown>;
  selection: Record<string, unknown> | null;
  credentials: OAuthTokens | null;
  documentLimit: number;
  /** externalId -> version of what the previous sync stored. */
  previous: Map<string, string>;
  fetch: ConnectorFetch;
  signal: AbortSignal;
}

export interface ConnectorProvider {
  readonly provider: Provider;
  readonly kind: "oauth" | "config";
  /** Throws an InputError naming the field and the rule. */
  validateConfig(config: unknown): Record<string, unknown>;
  authorizationUrl?(p: { state: string; redirectUrl: string; codeChallenge: string }): string;
  exchangeCode?(p: { code: string; redirectUrl: string; codeVerifier: string }): Promise<OAuthTokens>;
  refresh?(tokens: OAuthTokens): Promise<OAuthTokens>;
  /** The engine upserts documents and deletes the ones that no longer appear. */
  sync(ctx: SyncContext): AsyncIterable<SyncItem>;
}

/**
 * An item the provider knows is unchanged (same version as `previous`, content not fetched) is
 * still reported, so the engine keeps it: a document item whose `version` equals the previous
 * version and whose `content` is empty. The engine counts it as unchanged and writes nothing.
 */
export function unchangedDocument(
  externalId: string,
  version: string,
  rest: { title?: string | null; url?: string | null; type: DocumentType; metadata?: Metadata },
): SyncItemDocument {
  return {
    kind: "document",
    externalId,
    content: "",
    title: rest.title ?? null,
    url: rest.url ?? null,
    type: rest.type,
    metadata: rest.metadata ?? {},
    version,
  };
}

/** True when the item is the same version the previous sync stored (nothing to write). */
export function isUnchanged(item: SyncItemDocument, previous: Map<string, string>): boolean {
  return previous.get(item.externalId) === item.version;
}

/** What the registry gives each provider: configuration from the environment and a fetch for token requests. */
export interface ProviderOptions {
  /** MEMCTX_<PROVIDER>_CLIENT_ID / _CLIENT_SECRET, endpoint overrides (_AUTHORIZE_URL, _TOKEN_URL, _API_URL). */
  env?: NodeJS.ProcessEnv;
  /** Used for OAuth token requests and account lookups outside a sync. */
  fetch?: ConnectorFetch;
}
