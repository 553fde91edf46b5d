import { FILE_MAX_BYTES } from "../../../api/index.js";
import { InputError } from "../../errors.js";
import { FetchRefusedError } from "../../ingest/fetch.js";
import { pdfToText } from "../../ingest/pdf.js";
import { asObject, httpUrl, optionalBoolean, optionalString, requiredString } from "../config.js";
import { ConnectorApiError } from "../errors.js";
import { canonicalQuery, encodePath, signRequest } from "../sigv4.js";
import { decodeText, isPdf, isTextLike, looksBinary } from "../text.js";
import type { ConnectorProvider, SyncContext, SyncItem } from "../types.js";
import { unchangedDocument } from "../types.js";

/**
 * S3 and any S3-compatible store (MinIO, R2, Wasabi...): ListObjectsV2 under `config.prefix`,
 * then GetObject for each new or changed object (the ETag is the version). Requests are signed
 * with AWS Signature Version 4. Text-like objects become `text` documents, PDFs `pdf` documents;
 * other objects and objects over 50 MB are skipped with a reason.
 */

export interface S3Config {
  bucket: string;
  prefix: string;
  region: string;
  endpoint: string | null;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  forcePathStyle: boolean;
}

export function validateS3Config(config: unknown): Record<string, unknown> {
  const obj = asObject(config, "config");
  const bucket = requiredString(obj, "bucket");
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new InputError("config.bucket", "must be an S3 bucket name (3 to 63 of a-z 0-9 . -)");
  }
  const endpoint = optionalString(obj, "endpoint");
  const out: Record<string, unknown> = {
    ...obj,
    bucket,
    prefix: optionalString(obj, "prefix") ?? "",
    region: optionalString(obj, "region") ?? "us-east-1",
    accessKeyId: requiredString(obj, "accessKeyId"),
    secretAccessKey: requiredString(obj, "secretAccessKey"),
  };
  if (endpoint !== undefined) out.endpoint = httpUrl(endpoint, "config.endpoint");
  optionalString(obj, "sessionToken");
  optionalBoolean(obj, "forcePathStyle");
  return out;
}

function s3Config(config: Record<string, unknown>): S3Config {
  const checked = validateS3Config(config);
  const endpoint = (checked.endpoint as string | undefined) ?? null;
  const sessionToken = checked.sessionToken as string | undefined;
  return {
    bucket: checked.bucket as string,
    prefix: checked.prefix as string,
    region: checked.region as string,
    endpoint,
    accessKeyId: checked.accessKeyId as string,
    secretAccessKey: checked.secretAccessKey as string,
    ...(sessionToken ? { sessionToken } : {}),
    // Custom endpoints (MinIO and the like) mostly serve path-style; AWS prefers virtual-hosted.
    forcePathStyle: (checked.forcePathStyle as boolean | undefined) ?? endpoint !== null,
  };
}

export function createS3(): ConnectorProvider {
  return { provider: "s3", kind: "config", validateConfig: validateS3Config, sync: syncS3 };
}

/** The bucket's base URL (no trailing slash) in path or virtual-hosted style. */
export function bucketUrl(c: S3Config): string {
  const endpoint = new URL(c.endpoint ?? `https://s3.${c.region}.amazonaws.com`);
  if (c.forcePathStyle) return `${endpoint.origin}${endpoint.pathname.replace(/\/+$/, "")}/${c.bucket}`;
  return `${endpoint.protocol}//${c.bucket}.${endpoint.host}${endpoint.pathname.replace(/\/+$/, "")}`;
}

interface S3Object {
  key: string;
  etag: string;
  size: number;
  lastModified: string | null;
}

async function* syncS3(ctx: SyncContext): AsyncGenerator<SyncItem> {
  const c = s3Config(ctx.config);
  const base = bucketUrl(c);
  const signed = async (url: URL) => {
    const headers = signRequest(
      { method: "GET", url },
      {
        credentials: {
          accessKeyId: c.accessKeyId,
          secretAccessKey: c.secretAccessKey,
          sessionToken: c.sessionToken,
        },
        region: c.region,
        service: "s3",
        contentSha256Header: true,
      },
    );
    // The Host header is the URL's; fetch sets it.
    delete headers.host;
    return ctx.fetch(url.href, { headers, signal: ctx.signal });
  };

  let documents = 0;
  let token: string | null = null;
  do {
    const params: [string, string][] = [["list-type", "2"]];
    if (c.prefix) params.push(["prefix", c.prefix]);
    if (token) params.push(["continuation-token", token]);
    const listUrl = new URL(`${base}/?${canonicalQuery(params)}`);
    const response = await signed(listUrl);
    const xml = await response.text();
    if (!response.ok)
      throw new ConnectorApiError(
        `s3 ListObjectsV2 ${c.bucket}: ${s3Error(xml, response.status)}`,
        response.status,
      );
    const page = parseListObjects(xml);
    for (const object of page.objects) {
      if (documents >= ctx.documentLimit) return;
      if (object.key.endsWith("/")) continue;
      const externalId = `s3://${c.bucket}/${object.key}`;
      if (object.size > FILE_MAX_BYTES) {
        yield { kind: "skipped", item: externalId, reason: `larger than ${FILE_MAX_BYTES} bytes` };
        continue;
      }
      if (object.key.split("/").some((s) => s === "." || s === "..")) {
        yield {
          kind: "skipped",
          item: externalId,
          reason: "a key with . or .. segments cannot be addressed by URL",
        };
        continue;
      }
      const pdf = isPdf("", object.key);
      if (!pdf && !isTextLike("", object.key)) {
        yield { kind: "skipped", item: externalId, reason: "not a text or PDF file" };
        continue;
      }
      const type = pdf ? ("pdf" as const) : ("text" as const);
      const metadata = { bucket: c.bucket, key: object.key };
      const title = object.key.split("/").pop() ?? object.key;
      documents++;
      if (ctx.previous.get(externalId) === object.etag) {
        yield unchangedDocument(externalId, object.etag, { title, type, metadata });
        continue;
      }
      try {
        const got = await signed(new URL(`${base}/${encodePath(object.key)}`));
        if (!got.ok)
          throw new ConnectorApiError(
            `GetObject ${object.key}: ${s3Error(await got.text(), got.status)}`,
            got.status,
          );
        const bytes = new Uint8Array(await got.arrayBuffer());
        const version = got.headers.get("etag") ?? object.etag;
        const content = pdf
          ? (await pdfToText(bytes)).text
          : decodeText(bytes, got.headers.get("content-type") ?? "");
        if (!pdf && looksBinary(bytes)) {
          documents--;
          yield { kind: "skipped", item: externalId, reason: "binary content" };
          continue;
        }
        yield { kind: "document", externalId, content, title, url: null, type, metadata, version };
      } catch (error) {
        ctx.signal.throwIfAborted();
        documents--;
        const status = error instanceof ConnectorApiError ? error.status : null;
        if (status !== null && status >= 500) throw error;
        const kind = error instanceof FetchRefusedError ? "skipped" : "failed";
        yield { kind, item: externalId, reason: (error as Error).message };
      }
    }
    token = page.nextToken;
  } while (token !== null);
}

/** The parts of a ListObjectsV2 answer (XML) a sync needs. */
export function parseListObjects(xml: string): { objects: S3Object[]; nextToken: string | null } {
  const objects: S3Object[] = [];
  for (const match of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
    const body = match[1]!;
    const key = tag(body, "Key");
    if (key === null) continue;
    objects.push({
      key,
      etag: tag(body, "ETag") ?? "",
      size: Number(tag(body, "Size") ?? 0),
      lastModified: tag(body, "LastModified"),
    });
  }
  const truncated = tag(xml, "IsTruncated") === "true";
  return { objects, nextToken: truncated ? tag(xml, "NextContinuationToken") : null };
}

function tag(xml: string, name: string): string | null {
  const match = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return match ? xmlDecode(match[1]!) : null;
}

function xmlDecode(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&#x([0-9a-fA-F]+);/g, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, "&");
}

function s3Error(xml: string, status: number): string {
  const code = tag(xml, "Code");
  const message = tag(xml, "Message");
  return code ? `HTTP ${status} ${code}${message ? `: ${message}` : ""}` : `HTTP ${status}`;
}
