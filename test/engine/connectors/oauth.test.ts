import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConnectorApiError } from "../../../src/engine/connectors/errors.js";
import { connectorFetch } from "../../../src/engine/connectors/fetch.js";
import {
  codeChallengeS256,
  createCodeVerifier,
  createState,
  isExpired,
  OAuthClient,
} from "../../../src/engine/connectors/oauth.js";
import { createProviderRegistry } from "../../../src/engine/connectors/registry.js";
import { ConfigurationError } from "../../../src/engine/errors.js";
import { type AuthServer, startAuthServer } from "./oauth-server.js";

const fetch = connectorFetch({ allowPrivateNetwork: true, timeoutMs: 10_000 });
const REDIRECT = "http://127.0.0.1:1/connectors/oauth/callback";

let auth: AuthServer;
beforeEach(async () => {
  auth = await startAuthServer();
});
afterEach(async () => {
  await auth.close();
});

/** Plays the user's browser: follows the authorization link and reads code and state off the redirect. */
async function authorize(link: string): Promise<{ code: string; state: string }> {
  const response = await globalThis.fetch(link, { redirect: "manual" });
  expect(response.status).toBe(302);
  const back = new URL(response.headers.get("location")!);
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
  return { code: back.searchParams.get("code")!, state: back.searchParams.get("state")! };
}

function client(overrides: Partial<ConstructorParameters<typeof OAuthClient>[0]> = {}) {
  return new OAuthClient({
    provider: "google-drive",
    authorizeUrl: `${auth.url}/authorize`,
    tokenUrl: `${auth.url}/token`,
    scopes: ["read", "profile"],
    credentials: () => ({ clientId: auth.clientId, clientSecret: auth.clientSecret }),
    fetch,
    ...overrides,
  });
}

describe("PKCE and state", () => {
  it("derives the S256 challenge of RFC 7636's example verifier", () => {
    // RFC 7636 Appendix B.
    expect(codeChallengeS256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
  });

  it("makes unguessable, URL-safe states and verifiers of the allowed length", () => {
    const verifier = createCodeVerifier();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(createCodeVerifier()).not.toBe(verifier);
    expect(createState()).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it("treats a token as expired a minute before its expiry time", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(isExpired({ accessToken: "a", expiresAt: "2026-01-01T00:00:30Z" }, now)).toBe(true);
    expect(isExpired({ accessToken: "a", expiresAt: "2026-01-01T01:00:00Z" }, now)).toBe(false);
    expect(isExpired({ accessToken: "a", expiresAt: null }, now)).toBe(false);
  });
});

describe("OAuth 2.0 authorization code flow with PKCE", () => {
  it("sends the user to an authorization link, exchanges the code with the verifier and refreshes", async () => {
    const oauth = client({ extraAuthParams: { access_type: "offline" } });
    const verifier = createCodeVerifier();
    const state = createState();
    const link = oauth.authorizationUrl({
      state,
      redirectUrl: REDIRECT,
      codeChallenge: codeChallengeS256(verifier),
    });
    const returned = await authorize(link);
    expect(returned.state).toBe(state);
    expect(auth.state.lastAuthorize?.get("scope")).toBe("read profile");
    expect(auth.state.lastAuthorize?.get("access_type")).toBe("offline");
    expect(auth.state.lastAuthorize?.get("code_challenge")).toBe(
      createHash("sha256").update(verifier).digest("base64url"),
    );

    const before = Date.now();
    const tokens = await oauth.exchangeCode({
      code: returned.code,
      redirectUrl: REDIRECT,
      codeVerifier: verifier,
    });
    expect(auth.state.lastClientAuth).toBe("body");
    expect(tokens.accessToken).toBe(auth.state.issued.access[0]);
    expect(tokens.refreshToken).toBe(auth.state.issued.refresh[0]);
    expect(tokens.tokenType).toBe("Bearer");
    const expires = Date.parse(tokens.expiresAt!);
    expect(expires).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3_600_000);

    const fresh = await oauth.refresh(tokens);
    expect(fresh.accessToken).toBe(auth.state.issued.access[1]);
    expect(fresh.accessToken).not.toBe(tokens.accessToken);
    // The server sent no new refresh token: the old one is kept.
    expect(fresh.refreshToken).toBe(tokens.refreshToken);
  });

  it("is refused when the code verifier does not match the challenge", async () => {
    const oauth = client();
    const link = oauth.authorizationUrl({
      state: "s",
      redirectUrl: REDIRECT,
      codeChallenge: codeChallengeS256(createCodeVerifier()),
    });
    const { code } = await authorize(link);
    const attempt = oauth.exchangeCode({ code, redirectUrl: REDIRECT, codeVerifier: createCodeVerifier() });
    await expect(attempt).rejects.toThrow(ConnectorApiError);
    await expect(attempt).rejects.toThrow(/google-drive token request failed: HTTP 400/);
    expect(auth.state.issued.access).toEqual([]);
  });

  it("authenticates with HTTP Basic and JSON when the provider wants it (Notion)", async () => {
    const oauth = client({ clientAuth: "basic", tokenFormat: "json" });
    const verifier = createCodeVerifier();
    const { code } = await authorize(
      oauth.authorizationUrl({
        state: "s",
        redirectUrl: REDIRECT,
        codeChallenge: codeChallengeS256(verifier),
      }),
    );
    const tokens = await oauth.exchangeCode({ code, redirectUrl: REDIRECT, codeVerifier: verifier });
    expect(auth.state.lastClientAuth).toBe("basic");
    expect(tokens.accessToken).toMatch(/^at-/);
  });

  it("runs the GitHub provider's flow against configured endpoints and names the account", async () => {
    const env = {
      MEMCTX_GITHUB_CLIENT_ID: auth.clientId,
      MEMCTX_GITHUB_CLIENT_SECRET: auth.clientSecret,
      MEMCTX_GITHUB_AUTHORIZE_URL: `${auth.url}/authorize`,
      MEMCTX_GITHUB_TOKEN_URL: `${auth.url}/token`,
      MEMCTX_GITHUB_API_URL: auth.url,
    };
    const github = createProviderRegistry({ env, fetch }).github;
    const verifier = createCodeVerifier();
    const { code } = await authorize(
      github.authorizationUrl!({
        state: "st",
        redirectUrl: REDIRECT,
        codeChallenge: codeChallengeS256(verifier),
      }),
    );
    const tokens = await github.exchangeCode!({ code, redirectUrl: REDIRECT, codeVerifier: verifier });
    expect(tokens.account).toBe("octo-user");
    const refreshed = await github.refresh!(tokens);
    expect(refreshed.account).toBe("octo-user");
  });

  it("fails with a ConfigurationError naming the operator's variables when a provider has no OAuth app", () => {
    const registry = createProviderRegistry({ env: {}, fetch });
    const link = () =>
      registry["google-drive"].authorizationUrl!({ state: "s", redirectUrl: REDIRECT, codeChallenge: "c" });
    expect(link).toThrow(ConfigurationError);
    expect(link).toThrow("set MEMCTX_GOOGLE_DRIVE_CLIENT_ID and MEMCTX_GOOGLE_DRIVE_CLIENT_SECRET");
    for (const provider of ["notion", "onedrive", "gmail", "github"] as const) {
      const error = (() => {
        try {
          registry[provider].authorizationUrl!({ state: "s", redirectUrl: REDIRECT, codeChallenge: "c" });
        } catch (e) {
          return e as ConfigurationError;
        }
      })();
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error?.setting).toContain("_CLIENT_ID");
    }
  });

  it("builds each provider's real authorization link", () => {
    const env: Record<string, string> = {};
    for (const p of ["NOTION", "GOOGLE_DRIVE", "ONEDRIVE", "GMAIL", "GITHUB"]) {
      env[`MEMCTX_${p}_CLIENT_ID`] = "id";
      env[`MEMCTX_${p}_CLIENT_SECRET`] = "secret";
    }
    const registry = createProviderRegistry({ env, fetch });
    const link = (p: "notion" | "google-drive" | "onedrive" | "gmail" | "github") =>
      new URL(registry[p].authorizationUrl!({ state: "st", redirectUrl: REDIRECT, codeChallenge: "ch" }));
    expect(link("github").origin + link("github").pathname).toBe("https://github.com/login/oauth/authorize");
    expect(link("notion").origin + link("notion").pathname).toBe("https://api.notion.com/v1/oauth/authorize");
    expect(link("notion").searchParams.get("owner")).toBe("user");
    const drive = link("google-drive");
    expect(drive.origin + drive.pathname).toBe("https://accounts.google.com/o/oauth2/v2/auth");
    expect(drive.searchParams.get("scope")).toBe("https://www.googleapis.com/auth/drive.readonly");
    expect(drive.searchParams.get("access_type")).toBe("offline");
    expect(link("gmail").searchParams.get("scope")).toBe("https://www.googleapis.com/auth/gmail.readonly");
    const onedrive = link("onedrive");
    expect(onedrive.origin + onedrive.pathname).toBe(
      "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
    );
    expect(onedrive.searchParams.get("scope")).toBe("offline_access User.Read Files.Read");
    for (const p of ["notion", "google-drive", "onedrive", "gmail", "github"] as const) {
      const url = link(p);
      expect(url.searchParams.get("state")).toBe("st");
      expect(url.searchParams.get("code_challenge")).toBe("ch");
      expect(url.searchParams.get("code_challenge_method")).toBe("S256");
      expect(url.searchParams.get("redirect_uri")).toBe(REDIRECT);
      expect(url.searchParams.get("response_type")).toBe("code");
      expect(url.searchParams.get("client_id")).toBe("id");
    }
  });
});
