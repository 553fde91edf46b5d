import { createHash, randomBytes } from "node:crypto";
import type { Provider } from "../../api/index.js";
import { ConnectorApiError, ConnectorSetupError } from "./errors.js";
import type { ConnectorFetch, OAuthTokens } from "./types.js";

/**
 * A generic OAuth 2.0 authorization-code client with PKCE (RFC 6749, RFC 7636), used by every
 * OAuth provider. The engine keeps `state` and the code verifier with the pending connector;
 * this module builds the links and talks to the token endpoint.
 */

/** An opaque, unguessable value that ties the callback to the pending connector. */
export function createState(): string {
  return randomBytes(24).toString("base64url");
}

/** 43 to 128 characters of [A-Za-z0-9-._~] (RFC 7636 4.1): 32 random bytes in base64url are 43. */
export function createCodeVerifier(): string {
  return randomBytes(32).toString("base64url");
}

/** S256: base64url(sha256(verifier)) without padding (RFC 7636 4.2). */
export function codeChallengeS256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/** Access tokens that expire within this margin are refreshed before use. */
export const TOKEN_EXPIRY_MARGIN_MS = 60_000;

export function isExpired(tokens: OAuthTokens, now = Date.now(), marginMs = TOKEN_EXPIRY_MARGIN_MS): boolean {
  if (!tokens.expiresAt) return false;
  return Date.parse(tokens.expiresAt) - marginMs <= now;
}

export interface OAuthClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** The provider's env prefix: google-drive -> MEMCTX_GOOGLE_DRIVE. */
export function envPrefix(provider: Provider): string {
  return `MEMCTX_${provider.toUpperCase().replace(/-/g, "_")}`;
}

/** The provider's API base: MEMCTX_<PROVIDER>_API_URL (self-hosted, tests), else its public one. */
export function envApiUrl(provider: Provider, env: NodeJS.ProcessEnv, fallback: string): string {
  return env[`${envPrefix(provider)}_API_URL`]?.trim() || fallback;
}

/** Client id and secret from MEMCTX_<PROVIDER>_CLIENT_ID / _CLIENT_SECRET, or a 400 naming them. */
export function clientCredentials(provider: Provider, env: NodeJS.ProcessEnv): OAuthClientCredentials {
  const prefix = envPrefix(provider);
  const clientId = env[`${prefix}_CLIENT_ID`]?.trim();
  const clientSecret = env[`${prefix}_CLIENT_SECRET`]?.trim();
  if (!clientId || !clientSecret) {
    throw new ConnectorSetupError(
      `provider ${provider} needs an OAuth app: set ${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET for the engine`,
    );
  }
  return { clientId, clientSecret };
}

export interface OAuthClientOptions {
  provider: Provider;
  authorizeUrl: string;
  tokenUrl: string;
  scopes: readonly string[];
  /** How scopes are joined in the link (space by RFC 6749; GitHub accepts space too). */
  scopeSeparator?: string;
  /** Extra link parameters (Google: access_type=offline, prompt=consent; Notion: owner=user). */
  extraAuthParams?: Record<string, string>;
  /** How the client authenticates at the token endpoint: form fields (default) or HTTP Basic. */
  clientAuth?: "body" | "basic";
  /** Token request encoding: form (RFC 6749, default) or JSON (Notion). */
  tokenFormat?: "form" | "json";
  credentials: () => OAuthClientCredentials;
  fetch: ConnectorFetch;
}

export class OAuthClient {
  constructor(private readonly opts: OAuthClientOptions) {}

  authorizationUrl(p: { state: string; redirectUrl: string; codeChallenge: string }): string {
    const { clientId } = this.opts.credentials();
    const url = new URL(this.opts.authorizeUrl);
    const params: Record<string, string> = {
      response_type: "code",
      client_id: clientId,
      redirect_uri: p.redirectUrl,
      state: p.state,
      code_challenge: p.codeChallenge,
      code_challenge_method: "S256",
      ...this.opts.extraAuthParams,
    };
    if (this.opts.scopes.length > 0) params.scope = this.opts.scopes.join(this.opts.scopeSeparator ?? " ");
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    return url.href;
  }

  async exchangeCode(p: { code: string; redirectUrl: string; codeVerifier: string }): Promise<OAuthTokens> {
    return (await this.exchangeCodeRaw(p)).tokens;
  }

  /** The tokens and the token endpoint's whole answer (some providers put the account in it). */
  exchangeCodeRaw(p: {
    code: string;
    redirectUrl: string;
    codeVerifier: string;
  }): Promise<{ tokens: OAuthTokens; raw: Record<string, unknown> }> {
    return this.tokenRequest({
      grant_type: "authorization_code",
      code: p.code,
      redirect_uri: p.redirectUrl,
      code_verifier: p.codeVerifier,
    });
  }

  async refresh(tokens: OAuthTokens): Promise<OAuthTokens> {
    if (!tokens.refreshToken) {
      throw new ConnectorApiError(
        `${this.opts.provider}: the access token expired and there is no refresh token`,
      );
    }
    const { tokens: fresh } = await this.tokenRequest({
      grant_type: "refresh_token",
      refresh_token: tokens.refreshToken,
    });
    // A provider may omit the refresh token (and the account) on refresh: the old ones stay valid.
    return {
      ...fresh,
      refreshToken: fresh.refreshToken ?? tokens.refreshToken,
      account: fresh.account ?? tokens.account ?? null,
    };
  }

  private async tokenRequest(
    grant: Record<string, string>,
  ): Promise<{ tokens: OAuthTokens; raw: Record<string, unknown> }> {
    const { clientId, clientSecret } = this.opts.credentials();
    const fields: Record<string, string> = { ...grant };
    const headers: Record<string, string> = { accept: "application/json" };
    if ((this.opts.clientAuth ?? "body") === "basic") {
      headers.authorization = `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString("base64")}`;
    } else {
      fields.client_id = clientId;
      fields.client_secret = clientSecret;
    }
    let body: string;
    if ((this.opts.tokenFormat ?? "form") === "json") {
      headers["content-type"] = "application/json";
      body = JSON.stringify(fields);
    } else {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(fields).toString();
    }
    const response = await this.opts.fetch(this.opts.tokenUrl, { method: "POST", headers, body });
    const text = await response.text();
    let json: Record<string, unknown> | null = null;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Some servers answer errors in plain text; reported below.
    }
    // GitHub answers some token errors with 200 and an `error` field.
    if (!response.ok || json === null || typeof json.error === "string") {
      const reason =
        json && typeof json.error === "string"
          ? `${json.error}${typeof json.error_description === "string" ? `: ${json.error_description}` : ""}`
          : `HTTP ${response.status} ${text.slice(0, 200)}`;
      throw new ConnectorApiError(`${this.opts.provider} token request failed: ${reason}`, response.status);
    }
    return { tokens: parseTokenResponse(json, this.opts.provider), raw: json };
  }
}

/** RFC 6749 5.1: access_token, token_type, expires_in, refresh_token, scope. */
export function parseTokenResponse(
  json: Record<string, unknown>,
  provider: string,
  now = Date.now(),
): OAuthTokens {
  const accessToken = json.access_token;
  if (typeof accessToken !== "string" || accessToken === "") {
    throw new ConnectorApiError(`${provider} token response has no access_token`);
  }
  const expiresIn = Number(json.expires_in);
  return {
    accessToken,
    refreshToken: typeof json.refresh_token === "string" ? json.refresh_token : null,
    expiresAt:
      Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(now + expiresIn * 1000).toISOString() : null,
    tokenType: typeof json.token_type === "string" ? json.token_type : null,
    scope: typeof json.scope === "string" ? json.scope : null,
    account: null,
  };
}

/** RFC 6749 2.3.1: client id and secret are form-encoded before Basic encoding. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, "+");
}

/** Endpoint overrides for an OAuth provider: MEMCTX_<PROVIDER>_AUTHORIZE_URL / _TOKEN_URL (tests, enterprise). */
export function oauthEndpoints(
  provider: Provider,
  env: NodeJS.ProcessEnv,
  defaults: { authorizeUrl: string; tokenUrl: string },
): { authorizeUrl: string; tokenUrl: string } {
  const prefix = envPrefix(provider);
  return {
    authorizeUrl: env[`${prefix}_AUTHORIZE_URL`]?.trim() || defaults.authorizeUrl,
    tokenUrl: env[`${prefix}_TOKEN_URL`]?.trim() || defaults.tokenUrl,
  };
}

/** Bearer access token of a sync, or an error that says the connector is not authorized. */
export function bearer(credentials: OAuthTokens | null, provider: string): string {
  if (!credentials?.accessToken) throw new ConnectorApiError(`${provider}: the connector is not authorized`);
  return `Bearer ${credentials.accessToken}`;
}
