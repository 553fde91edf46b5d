import type { DocumentType } from "../../../api/index.js";
import { FILE_MAX_BYTES } from "../../../api/index.js";
import { FetchRefusedError } from "../../ingest/fetch.js";
import { pdfToText } from "../../ingest/pdf.js";
import { apiBase, apiUrlConfig, optionalStringArray } from "../config.js";
import { ConnectorApiError } from "../errors.js";
import { defaultFetch, getJson, isClientError } from "../http.js";
import { bearer, clientCredentials, envApiUrl, OAuthClient, oauthEndpoints } from "../oauth.js";
import { decodeText, isPdf, isTextLike } from "../text.js";
import type { ConnectorProvider, ProviderOptions, SyncContext, SyncItem } from "../types.js";
import { unchangedDocument } from "../types.js";

/**
 * OneDrive (Microsoft Graph v1.0): every file of the drive (GET /me/drive/root/delta, followed to
 * its end), or the files under `selection.folders` (paths like "Documents/Notes", walked with
 * /children). Text files become `onedrive` documents, PDFs `pdf` documents, and Office files are
 * converted by Graph (/content?format=pdf) and read as PDFs. Version: the cTag (content tag).
 */

export const GRAPH_API_URL = "https://graph.microsoft.com";
const CONVERTIBLE = /\.(docx?|odt|rtf|pptx?|odp|xlsx?|ods)$/i;

interface DriveItem {
  id: string;
  name?: string;
  size?: number;
  cTag?: string;
  eTag?: string;
  webUrl?: string;
  file?: { mimeType?: string };
  folder?: { childCount?: number };
  deleted?: unknown;
  root?: unknown;
}
interface Page {
  value: DriveItem[];
  "@odata.nextLink"?: string;
  "@odata.deltaLink"?: string;
}

export function createOneDrive(opts: ProviderOptions = {}): ConnectorProvider {
  const env = opts.env ?? process.env;
  const fetch = opts.fetch ?? defaultFetch();
  const envApi = envApiUrl("onedrive", env, GRAPH_API_URL);
  const oauth = new OAuthClient({
    provider: "onedrive",
    ...oauthEndpoints("onedrive", env, {
      authorizeUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
      tokenUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
    }),
    scopes: ["offline_access", "User.Read", "Files.Read"],
    credentials: () => clientCredentials("onedrive", env),
    fetch,
  });
  return {
    provider: "onedrive",
    kind: "oauth",
    validateConfig: apiUrlConfig(envApi),
    authorizationUrl: (p) => oauth.authorizationUrl(p),
    async exchangeCode(p) {
      const tokens = await oauth.exchangeCode(p);
      const me = await getJson<{ userPrincipalName?: string; mail?: string | null }>(
        fetch,
        `${envApi}/v1.0/me`,
        { authorization: `Bearer ${tokens.accessToken}` },
        "GET /v1.0/me",
      );
      return { ...tokens, account: me.mail ?? me.userPrincipalName ?? null };
    },
    refresh: (tokens) => oauth.refresh(tokens),
    sync: (ctx) => syncOneDrive(ctx, envApi),
  };
}

async function* listFiles(
  ctx: SyncContext,
  api: string,
  headers: Record<string, string>,
): AsyncGenerator<DriveItem> {
  const folders = optionalStringArray(ctx.selection, "folders");
  const get = (url: string) =>
    getJson<Page>(ctx.fetch, url, headers, `GET ${new URL(url).pathname}`, ctx.signal);
  if (folders === undefined) {
    let url: string | undefined = `${api}/v1.0/me/drive/root/delta`;
    while (url) {
      const page = await get(url);
      for (const item of page.value) if (item.file && !item.deleted) yield item;
      url = page["@odata.nextLink"];
    }
    return;
  }
  const pending = folders.map(
    (path) =>
      `${api}/v1.0/me/drive/root:/${path
        .replace(/^\/+|\/+$/g, "")
        .split("/")
        .map(encodeURIComponent)
        .join("/")}:/children`,
  );
  while (pending.length > 0) {
    let url: string | undefined = pending.shift();
    while (url) {
      const page = await get(url);
      for (const item of page.value) {
        if (item.folder) pending.push(`${api}/v1.0/me/drive/items/${encodeURIComponent(item.id)}/children`);
        else if (item.file) yield item;
      }
      url = page["@odata.nextLink"];
    }
  }
}

async function* syncOneDrive(ctx: SyncContext, envApi: string): AsyncGenerator<SyncItem> {
  const api = apiBase(ctx.config, envApi);
  const headers = { authorization: bearer(ctx.credentials, "onedrive") };
  let documents = 0;
  for await (const item of listFiles(ctx, api, headers)) {
    if (documents >= ctx.documentLimit) return;
    const name = item.name ?? item.id;
    const mime = item.file?.mimeType ?? "";
    const pdf = isPdf(mime, name);
    const convert = !pdf && CONVERTIBLE.test(name);
    if (!pdf && !convert && !isTextLike(mime, name)) {
      yield { kind: "skipped", item: name, reason: `unsupported file type ${mime || name}` };
      continue;
    }
    if ((item.size ?? 0) > FILE_MAX_BYTES) {
      yield { kind: "skipped", item: name, reason: `larger than ${FILE_MAX_BYTES} bytes` };
      continue;
    }
    const version = item.cTag ?? item.eTag ?? "";
    const type: DocumentType = pdf || convert ? "pdf" : "onedrive";
    const meta = { title: name, url: item.webUrl ?? null, type, metadata: { onedriveItemId: item.id } };
    documents++;
    if (version && ctx.previous.get(item.id) === version) {
      yield unchangedDocument(item.id, version, meta);
      continue;
    }
    try {
      // /content answers 302 to a pre-authenticated download URL; the bearer token is not sent there.
      const url = `${api}/v1.0/me/drive/items/${encodeURIComponent(item.id)}/content${convert ? "?format=pdf" : ""}`;
      const response = await ctx.fetch(url, { headers, signal: ctx.signal });
      if (!response.ok)
        throw new ConnectorApiError(`download ${name}: HTTP ${response.status}`, response.status);
      const bytes = new Uint8Array(await response.arrayBuffer());
      const content =
        pdf || convert
          ? (await pdfToText(bytes)).text
          : decodeText(bytes, response.headers.get("content-type") ?? mime);
      yield { kind: "document", externalId: item.id, content, ...meta, version: version || item.id };
    } catch (error) {
      ctx.signal.throwIfAborted();
      if (error instanceof ConnectorApiError && !isClientError(error)) throw error;
      documents--;
      yield {
        kind: error instanceof FetchRefusedError ? "skipped" : "failed",
        item: name,
        reason: (error as Error).message,
      };
    }
  }
}
