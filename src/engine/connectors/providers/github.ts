import { FILE_MAX_BYTES } from "../../../api/index.js";
import { InputError } from "../../errors.js";
import { apiBase, asObject, optionalString, optionalStringArray } from "../config.js";
import { ConnectorApiError } from "../errors.js";
import { defaultFetch, getJson, isClientError, nextLink } from "../http.js";
import { clientCredentials, envApiUrl, OAuthClient, oauthEndpoints } from "../oauth.js";
import type { ConnectorProvider, ProviderOptions, SyncContext, SyncItem } from "../types.js";
import { unchangedDocument } from "../types.js";

/**
 * GitHub (REST API v3): the Markdown and text files (.md, .mdx, .txt, .rst) of the selected
 * repositories (`selection.repositories: ["owner/name"]`, default: every repository the account
 * can read), one `github_markdown` document per file. The blob sha is the version: an unchanged
 * file is not fetched again. Token: the OAuth connection, or `config.token` (a personal token).
 */

export const GITHUB_API_URL = "https://api.github.com";
const DOCUMENT_FILES = /\.(md|mdx|txt|rst)$/i;

interface GitHubRepo {
  full_name: string;
  default_branch: string;
  html_url: string;
  private?: boolean;
}
interface GitTree {
  sha: string;
  truncated: boolean;
  tree: { path: string; type: string; sha: string; size?: number }[];
}

export function createGitHub(opts: ProviderOptions = {}): ConnectorProvider {
  const env = opts.env ?? process.env;
  const fetch = opts.fetch ?? defaultFetch();
  const endpoints = oauthEndpoints("github", env, {
    authorizeUrl: "https://github.com/login/oauth/authorize",
    tokenUrl: "https://github.com/login/oauth/access_token",
  });
  const oauth = new OAuthClient({
    provider: "github",
    ...endpoints,
    scopes: ["repo", "read:user"],
    credentials: () => clientCredentials("github", env),
    fetch,
  });
  const envApi = envApiUrl("github", env, GITHUB_API_URL);

  return {
    provider: "github",
    kind: "oauth",
    validateConfig(config) {
      const obj = asObject(config, "config");
      apiBase(obj, envApi);
      optionalString(obj, "token");
      return obj;
    },
    authorizationUrl: (p) => oauth.authorizationUrl(p),
    async exchangeCode(p) {
      const tokens = await oauth.exchangeCode(p);
      const user = await getJson<{ login?: string }>(
        fetch,
        `${envApi}/user`,
        headers(tokens.accessToken),
        "GET /user",
      );
      return { ...tokens, account: user.login ?? null };
    },
    refresh: (tokens) => oauth.refresh(tokens),
    sync: (ctx) => syncGitHub(ctx, envApi),
  };
}

function headers(token: string): Record<string, string> {
  return {
    accept: "application/vnd.github+json",
    authorization: `Bearer ${token}`,
    "x-github-api-version": "2022-11-28",
  };
}

function repositoriesOf(selection: Record<string, unknown> | null): string[] | undefined {
  const repos = optionalStringArray(selection, "repositories");
  for (const repo of repos ?? []) {
    if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) {
      throw new InputError("selection.repositories", `"${repo}" is not of the form owner/name`);
    }
  }
  return repos;
}

async function* syncGitHub(ctx: SyncContext, envApi: string): AsyncGenerator<SyncItem> {
  const api = apiBase(ctx.config, envApi);
  const token = optionalString(ctx.config, "token") ?? ctx.credentials?.accessToken;
  if (!token)
    throw new ConnectorApiError("github: the connector is not authorized (no OAuth token or config.token)");
  const h = headers(token);
  const get = <T>(url: string, what: string) => getJson<T>(ctx.fetch, url, h, what, ctx.signal);

  const repos: GitHubRepo[] = [];
  const selected = repositoriesOf(ctx.selection);
  if (selected !== undefined) {
    for (const name of selected) {
      try {
        repos.push(await get<GitHubRepo>(`${api}/repos/${name}`, `GET /repos/${name}`));
      } catch (error) {
        if (!isClientError(error)) throw error;
        yield { kind: "failed", item: name, reason: error.message };
      }
    }
  } else {
    let url: string | null = `${api}/user/repos?per_page=100&sort=full_name`;
    while (url !== null) {
      const response = await ctx.fetch(url, { headers: h, signal: ctx.signal });
      if (!response.ok)
        throw new ConnectorApiError(`GET /user/repos: HTTP ${response.status}`, response.status);
      repos.push(...((await response.json()) as GitHubRepo[]));
      url = nextLink(response.headers.get("link"));
    }
  }

  let documents = 0;
  for (const repo of repos) {
    if (documents >= ctx.documentLimit) return;
    const branch = repo.default_branch;
    let tree: GitTree;
    try {
      tree = await get<GitTree>(
        `${api}/repos/${repo.full_name}/git/trees/${encodeURIComponent(branch)}?recursive=1`,
        `GET /repos/${repo.full_name}/git/trees/${branch}`,
      );
    } catch (error) {
      // An empty repository has no tree (409); a removed one 404s.
      if (!isClientError(error)) throw error;
      if (error.status !== 409) yield { kind: "failed", item: repo.full_name, reason: error.message };
      continue;
    }
    if (tree.truncated) {
      yield {
        kind: "skipped",
        item: repo.full_name,
        reason: "the repository tree is too large for one listing; some files were left out",
      };
    }
    for (const entry of tree.tree) {
      if (entry.type !== "blob" || !DOCUMENT_FILES.test(entry.path)) continue;
      if (documents >= ctx.documentLimit) return;
      const externalId = `${repo.full_name}/${entry.path}`;
      const item = `${repo.full_name}:${entry.path}`;
      if ((entry.size ?? 0) > FILE_MAX_BYTES) {
        yield { kind: "skipped", item, reason: `larger than ${FILE_MAX_BYTES} bytes` };
        continue;
      }
      const url = `${repo.html_url}/blob/${branch}/${entry.path.split("/").map(encodeURIComponent).join("/")}`;
      const metadata = { repository: repo.full_name, path: entry.path, branch };
      documents++;
      if (ctx.previous.get(externalId) === entry.sha) {
        yield unchangedDocument(externalId, entry.sha, {
          title: entry.path,
          url,
          type: "github_markdown",
          metadata,
        });
        continue;
      }
      try {
        const blob = await get<{ content: string; encoding: string }>(
          `${api}/repos/${repo.full_name}/git/blobs/${entry.sha}`,
          `GET /repos/${repo.full_name}/git/blobs/${entry.sha}`,
        );
        const content =
          blob.encoding === "base64"
            ? Buffer.from(blob.content.replace(/\s/g, ""), "base64").toString("utf8")
            : blob.content;
        yield {
          kind: "document",
          externalId,
          content,
          title: entry.path,
          url,
          type: "github_markdown",
          metadata,
          version: entry.sha,
        };
      } catch (error) {
        if (!isClientError(error)) throw error;
        documents--;
        yield { kind: "failed", item: externalId, reason: error.message };
      }
    }
  }
}
