import { createHash, createHmac } from "node:crypto";

/**
 * AWS Signature Version 4 (header form), as S3 and every S3-compatible store expect it:
 * canonical request -> string to sign -> HMAC chain signing key -> Authorization header.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html
 */

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

export const EMPTY_PAYLOAD_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const ALGORITHM = "AWS4-HMAC-SHA256";

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data, "utf8").digest();
}

/** RFC 3986 percent-encoding: everything but A-Z a-z 0-9 - _ . ~ (AWS's UriEncode). */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** A key as a URL path: each segment encoded, slashes kept. */
export function encodePath(path: string): string {
  return path.split("/").map(uriEncode).join("/");
}

/** Query parameters sorted by name, then value, each encoded (the form both signed and sent). */
export function canonicalQuery(params: [string, string][]): string {
  return params
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

export interface CanonicalRequestInput {
  method: string;
  /** Already encoded path, exactly as sent ("/" when empty). */
  path: string;
  /** Already canonical query string, exactly as sent. */
  query: string;
  /** Headers to sign (any case); values are trimmed and inner whitespace collapsed. */
  headers: Record<string, string>;
  payloadHash: string;
}

export function canonicalRequest(input: CanonicalRequestInput): { request: string; signedHeaders: string } {
  const entries = Object.entries(input.headers)
    .map(([k, v]) => [k.toLowerCase(), v.trim().replace(/\s+/g, " ")] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const signedHeaders = entries.map(([k]) => k).join(";");
  const request = [
    input.method.toUpperCase(),
    input.path || "/",
    input.query,
    entries.map(([k, v]) => `${k}:${v}\n`).join(""),
    signedHeaders,
    input.payloadHash,
  ].join("\n");
  return { request, signedHeaders };
}

export function credentialScope(amzDate: string, region: string, service: string): string {
  return `${amzDate.slice(0, 8)}/${region}/${service}/aws4_request`;
}

export function stringToSign(amzDate: string, scope: string, canonical: string): string {
  return [ALGORITHM, amzDate, scope, sha256Hex(canonical)].join("\n");
}

export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  const kDate = hmac(`AWS4${secretAccessKey}`, date);
  const kRegion = hmac(kDate, region);
  const kService = hmac(kRegion, service);
  return hmac(kService, "aws4_request");
}

export function signature(
  secretAccessKey: string,
  amzDate: string,
  region: string,
  service: string,
  toSign: string,
): string {
  return createHmac("sha256", signingKey(secretAccessKey, amzDate.slice(0, 8), region, service))
    .update(toSign, "utf8")
    .digest("hex");
}

/** `20150830T123600Z` */
export function amzDate(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}

export interface SignOptions {
  credentials: SigV4Credentials;
  region: string;
  service: string;
  date?: Date;
  /** S3 requires x-amz-content-sha256 on every request; other services do not. */
  contentSha256Header?: boolean;
}

/**
 * Signs a request: returns the headers to send (the given ones plus host, x-amz-date,
 * x-amz-security-token and x-amz-content-sha256 where they apply, and authorization).
 * Every header passed in is signed.
 */
export function signRequest(
  req: { method: string; url: URL; headers?: Record<string, string>; body?: string | Uint8Array },
  opts: SignOptions,
): Record<string, string> {
  const date = amzDate(opts.date ?? new Date());
  const payloadHash = sha256Hex(req.body ?? "");
  const headers: Record<string, string> = { ...lowerKeys(req.headers ?? {}) };
  headers.host = req.url.host;
  headers["x-amz-date"] = date;
  if (opts.credentials.sessionToken) headers["x-amz-security-token"] = opts.credentials.sessionToken;
  if (opts.contentSha256Header) headers["x-amz-content-sha256"] = payloadHash;
  const { request, signedHeaders } = canonicalRequest({
    method: req.method,
    path: req.url.pathname,
    query: req.url.search.replace(/^\?/, ""),
    headers,
    payloadHash,
  });
  const scope = credentialScope(date, opts.region, opts.service);
  const sig = signature(
    opts.credentials.secretAccessKey,
    date,
    opts.region,
    opts.service,
    stringToSign(date, scope, request),
  );
  headers.authorization = `${ALGORITHM} Credential=${opts.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${sig}`;
  return headers;
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}
