import type { Provider } from "../../../api/index.js";
import { clientCredentials, OAuthClient, oauthEndpoints } from "../oauth.js";
import type { ConnectorFetch } from "../types.js";

/** Google's OAuth 2.0 endpoints, shared by google-drive and gmail (each with its own client and scopes). */
export const GOOGLE_AUTHORIZE_URL = "https://accounts.google.com/o/oauth2/v2/auth";
export const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";
export const GOOGLE_API_URL = "https://www.googleapis.com";
export const GMAIL_API_URL = "https://gmail.googleapis.com";

export function googleOAuth(
  provider: Provider,
  scopes: string[],
  env: NodeJS.ProcessEnv,
  fetch: ConnectorFetch,
) {
  return new OAuthClient({
    provider,
    ...oauthEndpoints(provider, env, { authorizeUrl: GOOGLE_AUTHORIZE_URL, tokenUrl: GOOGLE_TOKEN_URL }),
    scopes,
    // A refresh token is only issued with offline access, and again only with consent.
    extraAuthParams: { access_type: "offline", prompt: "consent", include_granted_scopes: "true" },
    credentials: () => clientCredentials(provider, env),
    fetch,
  });
}
