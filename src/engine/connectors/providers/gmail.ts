import { htmlToText } from "../../ingest/html.js";
import { apiBase, apiUrlConfig, optionalString, optionalStringArray } from "../config.js";
import { defaultFetch, getJson, isClientError } from "../http.js";
import { bearer, envApiUrl } from "../oauth.js";
import type { ConnectorProvider, ProviderOptions, SyncContext, SyncItem } from "../types.js";
import { unchangedDocument } from "../types.js";
import { GMAIL_API_URL, googleOAuth } from "./google.js";

/**
 * Gmail (API v1): the messages of the INBOX (or `selection.labels`, narrowed by
 * `selection.query` in Gmail search syntax), newest first, one `text` document per message:
 * its headers and its text/plain body (text/html converted when there is no plain part).
 * A message never changes, so its id is its version and a known message is not fetched again.
 */

interface MessagePart {
  mimeType?: string;
  filename?: string;
  headers?: { name: string; value: string }[];
  body?: { data?: string; size?: number; attachmentId?: string };
  parts?: MessagePart[];
}
interface GmailMessage {
  id: string;
  threadId?: string;
  labelIds?: string[];
  internalDate?: string;
  snippet?: string;
  payload?: MessagePart;
}

export function createGmail(opts: ProviderOptions = {}): ConnectorProvider {
  const env = opts.env ?? process.env;
  const fetch = opts.fetch ?? defaultFetch();
  const envApi = envApiUrl("gmail", env, GMAIL_API_URL);
  const oauth = googleOAuth("gmail", ["https://www.googleapis.com/auth/gmail.readonly"], env, fetch);
  return {
    provider: "gmail",
    kind: "oauth",
    validateConfig: apiUrlConfig(envApi),
    authorizationUrl: (p) => oauth.authorizationUrl(p),
    async exchangeCode(p) {
      const tokens = await oauth.exchangeCode(p);
      const profile = await getJson<{ emailAddress?: string }>(
        fetch,
        `${envApi}/gmail/v1/users/me/profile`,
        { authorization: `Bearer ${tokens.accessToken}` },
        "GET /gmail/v1/users/me/profile",
      );
      return { ...tokens, account: profile.emailAddress ?? null };
    },
    refresh: (tokens) => oauth.refresh(tokens),
    sync: (ctx) => syncGmail(ctx, envApi),
  };
}

async function* syncGmail(ctx: SyncContext, envApi: string): AsyncGenerator<SyncItem> {
  const api = apiBase(ctx.config, envApi);
  const headers = { authorization: bearer(ctx.credentials, "gmail") };
  const labels = optionalStringArray(ctx.selection, "labels") ?? ["INBOX"];
  const query = ctx.selection ? optionalString(ctx.selection, "query", "selection") : undefined;
  let documents = 0;
  let pageToken: string | null = null;
  do {
    const params = new URLSearchParams({ maxResults: String(Math.min(500, Math.max(1, ctx.documentLimit))) });
    for (const label of labels) params.append("labelIds", label);
    if (query) params.set("q", query);
    if (pageToken) params.set("pageToken", pageToken);
    const listing: { messages?: { id: string }[]; nextPageToken?: string } = await getJson(
      ctx.fetch,
      `${api}/gmail/v1/users/me/messages?${params}`,
      headers,
      "GET /gmail/v1/users/me/messages",
      ctx.signal,
    );
    for (const { id } of listing.messages ?? []) {
      if (documents >= ctx.documentLimit) return;
      documents++;
      if (ctx.previous.get(id) === id) {
        yield unchangedDocument(id, id, {
          url: messageUrl(id),
          type: "text",
          metadata: { gmailMessageId: id },
        });
        continue;
      }
      try {
        const message = await getJson<GmailMessage>(
          ctx.fetch,
          `${api}/gmail/v1/users/me/messages/${encodeURIComponent(id)}?format=full`,
          headers,
          `GET /gmail/v1/users/me/messages/${id}`,
          ctx.signal,
        );
        yield messageDocument(message);
      } catch (error) {
        if (!isClientError(error)) throw error;
        documents--;
        yield { kind: "failed", item: id, reason: error.message };
      }
    }
    pageToken = listing.nextPageToken ?? null;
  } while (pageToken !== null);
}

function messageUrl(id: string): string {
  return `https://mail.google.com/mail/u/0/#all/${id}`;
}

export function messageDocument(message: GmailMessage): SyncItem {
  const header = (name: string) =>
    message.payload?.headers?.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value ?? null;
  const subject = header("Subject");
  const date = message.internalDate ? new Date(Number(message.internalDate)).toISOString() : header("Date");
  const body = messageBody(message.payload) ?? message.snippet ?? "";
  const lines = [
    ["From", header("From")],
    ["To", header("To")],
    ["Cc", header("Cc")],
    ["Date", date],
    ["Subject", subject],
  ]
    .filter(([, value]) => value)
    .map(([name, value]) => `${name}: ${value}`);
  return {
    kind: "document",
    externalId: message.id,
    content: `${lines.join("\n")}\n\n${body}`.trim(),
    title: subject,
    url: messageUrl(message.id),
    type: "text",
    metadata: {
      gmailMessageId: message.id,
      ...(message.threadId ? { threadId: message.threadId } : {}),
      ...(header("From") ? { from: header("From")! } : {}),
      ...(date ? { date } : {}),
      labels: message.labelIds ?? [],
    },
    version: message.id,
  };
}

/** The message text: the first text/plain part (not an attachment), else the first text/html part as text. */
export function messageBody(payload: MessagePart | undefined): string | null {
  if (!payload) return null;
  const parts: MessagePart[] = [];
  const walk = (part: MessagePart) => {
    parts.push(part);
    for (const child of part.parts ?? []) walk(child);
  };
  walk(payload);
  const inline = parts.filter((p) => !p.filename && p.body?.data);
  const plain = inline.find((p) => p.mimeType === "text/plain");
  if (plain) return decodeBase64Url(plain.body!.data!);
  const html = inline.find((p) => p.mimeType === "text/html");
  if (html) return htmlToText(decodeBase64Url(html.body!.data!)).text;
  return null;
}

export function decodeBase64Url(data: string): string {
  return Buffer.from(data.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8");
}
