import type { DocumentType } from "../../../api/index.js";
import { FILE_MAX_BYTES } from "../../../api/index.js";
import { FetchRefusedError } from "../../ingest/fetch.js";
import { pdfToText } from "../../ingest/pdf.js";
import { apiBase, apiUrlConfig, optionalString, optionalStringArray } from "../config.js";
import { ConnectorApiError } from "../errors.js";
import { defaultFetch, getJson, isClientError } from "../http.js";
import { bearer, envApiUrl } from "../oauth.js";
import { decodeText, isTextLike } from "../text.js";
import type { ConnectorProvider, ProviderOptions, SyncContext, SyncItem } from "../types.js";
import { unchangedDocument } from "../types.js";
import { GOOGLE_API_URL, googleOAuth } from "./google.js";

/**
 * Google Drive (API v3): Google Docs, Sheets and Slides exported as text (files.export),
 * text files and PDFs downloaded (alt=media). `selection.folders` (folder ids) narrows the sync
 * to files directly in those folders; `selection.query` adds a Drive search clause. Version: the
 * file's `version` (it changes on every content change) or its modifiedTime.
 */

const EXPORTS: Record<string, { mimeType: string; type: DocumentType }> = {
  "application/vnd.google-apps.document": { mimeType: "text/plain", type: "google_doc" },
  "application/vnd.google-apps.spreadsheet": { mimeType: "text/csv", type: "google_sheet" },
  "application/vnd.google-apps.presentation": { mimeType: "text/plain", type: "google_slide" },
};
const FIELDS = "nextPageToken,files(id,name,mimeType,modifiedTime,version,size,webViewLink)";

interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  modifiedTime?: string;
  version?: string;
  size?: string;
  webViewLink?: string;
}

export function createGoogleDrive(opts: ProviderOptions = {}): ConnectorProvider {
  const env = opts.env ?? process.env;
  const fetch = opts.fetch ?? defaultFetch();
  const envApi = envApiUrl("google-drive", env, GOOGLE_API_URL);
  const oauth = googleOAuth("google-drive", ["https://www.googleapis.com/auth/drive.readonly"], env, fetch);
  return {
    provider: "google-drive",
    kind: "oauth",
    validateConfig: apiUrlConfig(envApi),
    authorizationUrl: (p) => oauth.authorizationUrl(p),
    async exchangeCode(p) {
      const tokens = await oauth.exchangeCode(p);
      const about = await getJson<{ user?: { emailAddress?: string } }>(
        fetch,
        `${envApi}/drive/v3/about?fields=user`,
        { authorization: `Bearer ${tokens.accessToken}` },
        "GET /drive/v3/about",
      );
      return { ...tokens, account: about.user?.emailAddress ?? null };
    },
    refresh: (tokens) => oauth.refresh(tokens),
    sync: (ctx) => syncDrive(ctx, envApi),
  };
}

/** The files.list `q`: not trashed, a type we can read, in the selected folders. */
export function driveQuery(selection: Record<string, unknown> | null): string {
  const types = [...Object.keys(EXPORTS), "application/pdf"].map((t) => `mimeType = '${t}'`);
  const clauses = ["trashed = false", `(${types.join(" or ")} or mimeType contains 'text/')`];
  const folders = optionalStringArray(selection, "folders");
  if (folders?.length)
    clauses.push(`(${folders.map((id) => `'${id.replace(/['\\]/g, "\\$&")}' in parents`).join(" or ")})`);
  const extra = selection ? optionalString(selection, "query", "selection") : undefined;
  if (extra) clauses.push(`(${extra})`);
  return clauses.join(" and ");
}

async function* syncDrive(ctx: SyncContext, envApi: string): AsyncGenerator<SyncItem> {
  const api = apiBase(ctx.config, envApi);
  const headers = { authorization: bearer(ctx.credentials, "google-drive") };
  const q = driveQuery(ctx.selection);
  let documents = 0;
  let pageToken: string | null = null;
  do {
    const params = new URLSearchParams({ q, fields: FIELDS, pageSize: "100", orderBy: "modifiedTime desc" });
    if (pageToken) params.set("pageToken", pageToken);
    const listing: { files: DriveFile[]; nextPageToken?: string } = await getJson(
      ctx.fetch,
      `${api}/drive/v3/files?${params}`,
      headers,
      "GET /drive/v3/files",
      ctx.signal,
    );
    for (const file of listing.files) {
      if (documents >= ctx.documentLimit) return;
      const exported = EXPORTS[file.mimeType];
      const pdf = file.mimeType === "application/pdf";
      if (!exported && !pdf && !isTextLike(file.mimeType, file.name)) {
        yield { kind: "skipped", item: file.id, reason: `unsupported type ${file.mimeType}` };
        continue;
      }
      if (Number(file.size ?? 0) > FILE_MAX_BYTES) {
        yield { kind: "skipped", item: file.id, reason: `larger than ${FILE_MAX_BYTES} bytes` };
        continue;
      }
      const type: DocumentType = exported?.type ?? (pdf ? "pdf" : "text");
      const version = file.version ?? file.modifiedTime ?? "";
      const meta = {
        title: file.name,
        url: file.webViewLink ?? null,
        type,
        metadata: { driveFileId: file.id, mimeType: file.mimeType },
      };
      documents++;
      if (version && ctx.previous.get(file.id) === version) {
        yield unchangedDocument(file.id, version, meta);
        continue;
      }
      try {
        const url = exported
          ? `${api}/drive/v3/files/${encodeURIComponent(file.id)}/export?mimeType=${encodeURIComponent(exported.mimeType)}`
          : `${api}/drive/v3/files/${encodeURIComponent(file.id)}?alt=media`;
        const response = await ctx.fetch(url, { headers, signal: ctx.signal });
        if (!response.ok)
          throw new ConnectorApiError(`download ${file.name}: HTTP ${response.status}`, response.status);
        const bytes = new Uint8Array(await response.arrayBuffer());
        const content = pdf
          ? (await pdfToText(bytes)).text
          : decodeText(bytes, response.headers.get("content-type") ?? "");
        yield { kind: "document", externalId: file.id, content, ...meta, version: version || file.id };
      } catch (error) {
        ctx.signal.throwIfAborted();
        if (error instanceof ConnectorApiError && !isClientError(error)) throw error;
        documents--;
        yield {
          kind: error instanceof FetchRefusedError ? "skipped" : "failed",
          item: file.id,
          reason: (error as Error).message,
        };
      }
    }
    pageToken = listing.nextPageToken ?? null;
  } while (pageToken !== null);
}
