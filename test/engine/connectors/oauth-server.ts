import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { type HttpServer, json, startHttpServer } from "../../support/http-server.js";

/**
 * A local OAuth 2.0 authorization server (RFC 6749 authorization code + RFC 7636 PKCE S256,
 * refresh_token grant) for the OAuth tests. Clients authenticate in the form body or with HTTP
 * Basic; token requests are form-encoded, or JSON when `json` is set (Notion's variant).
 */
export interface AuthServerState {
  /** Authorization parameters of the last /authorize call. */
  lastAuthorize: URLSearchParams | null;
  /** How the client authenticated at the token endpoint on the last call. */
  lastClientAuth: "body" | "basic" | null;
  issued: { access: string[]; refresh: string[] };
  /** authorization_code grants asked for, granted or not. */
  codeExchanges: number;
}
export interface AuthServer extends HttpServer {
  clientId: string;
  clientSecret: string;
  state: AuthServerState;
}

export async function startAuthServer(extra?: (req: IncomingMessage) => unknown): Promise<AuthServer> {
  const codes = new Map<string, { challenge: string; redirectUri: string; clientId: string }>();
  const state: AuthServerState = {
    lastAuthorize: null,
    lastClientAuth: null,
    issued: { access: [], refresh: [] },
    codeExchanges: 0,
  };
  const clientId = "client-123";
  const clientSecret = "s3cret+/=";
  const server = await startHttpServer((req, res, body) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method === "GET" && url.pathname === "/authorize") {
      const p = url.searchParams;
      state.lastAuthorize = p;
      if (p.get("response_type") !== "code" || p.get("client_id") !== clientId) {
        return json(res, 400, { error: "unauthorized_client" });
      }
      if (
        p.get("code_challenge_method") !== "S256" ||
        !/^[A-Za-z0-9_-]{43}$/.test(p.get("code_challenge") ?? "")
      ) {
        return json(res, 400, { error: "invalid_request", error_description: "PKCE S256 is required" });
      }
      const code = randomBytes(12).toString("hex");
      codes.set(code, { challenge: p.get("code_challenge")!, redirectUri: p.get("redirect_uri")!, clientId });
      const back = new URL(p.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", p.get("state") ?? "");
      res.writeHead(302, { location: back.href });
      res.end();
      return;
    }
    if (req.method === "POST" && url.pathname === "/token") {
      const isJson = (req.headers["content-type"] ?? "").startsWith("application/json");
      const fields: Record<string, string> = isJson
        ? (JSON.parse(body) as Record<string, string>)
        : Object.fromEntries(new URLSearchParams(body));
      if (!isJson && req.headers["content-type"] !== "application/x-www-form-urlencoded") {
        return json(res, 400, { error: "invalid_request", error_description: "form encoding expected" });
      }
      let id = fields.client_id;
      let secret = fields.client_secret;
      state.lastClientAuth = "body";
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
      if (basic) {
        const [u, pw] = Buffer.from(basic[1]!, "base64").toString().split(":");
        id = decodeURIComponent(u!.replace(/\+/g, " "));
        secret = decodeURIComponent(pw!.replace(/\+/g, " "));
        state.lastClientAuth = "basic";
      }
      if (id !== clientId || secret !== clientSecret) return json(res, 401, { error: "invalid_client" });
      const issue = (withRefresh: boolean) => {
        const access = `at-${randomBytes(8).toString("hex")}`;
        state.issued.access.push(access);
        const out: Record<string, unknown> = {
          access_token: access,
          token_type: "Bearer",
          expires_in: 3600,
          scope: "read",
        };
        if (withRefresh) {
          const refresh = `rt-${randomBytes(8).toString("hex")}`;
          state.issued.refresh.push(refresh);
          out.refresh_token = refresh;
        }
        return { ...out, ...((extra?.(req) as object | undefined) ?? {}) };
      };
      if (fields.grant_type === "authorization_code") {
        state.codeExchanges++;
        const grant = codes.get(fields.code ?? "");
        codes.delete(fields.code ?? "");
        if (!grant || grant.redirectUri !== fields.redirect_uri)
          return json(res, 400, { error: "invalid_grant" });
        const challenge = createHash("sha256")
          .update(fields.code_verifier ?? "")
          .digest("base64url");
        if (challenge !== grant.challenge) {
          return json(res, 400, { error: "invalid_grant", error_description: "PKCE verification failed" });
        }
        return json(res, 200, issue(true));
      }
      if (fields.grant_type === "refresh_token") {
        if (!state.issued.refresh.includes(fields.refresh_token ?? ""))
          return json(res, 400, { error: "invalid_grant" });
        // Like Google, a refresh does not issue a new refresh token.
        return json(res, 200, issue(false));
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    }
    if (req.method === "GET" && url.pathname === "/user") {
      if (!state.issued.access.some((t) => req.headers.authorization === `Bearer ${t}`))
        return json(res, 401, { message: "Bad credentials" });
      return json(res, 200, { login: "octo-user", id: 1 });
    }
    json(res, 404, { error: "not found" });
  });
  return { ...server, close: server.close, clientId, clientSecret, state };
}
