import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bucketUrl, createS3, parseListObjects } from "../../../src/engine/connectors/providers/s3.js";
import {
  canonicalRequest,
  credentialScope,
  sha256Hex,
  signature,
  stringToSign,
  uriEncode,
} from "../../../src/engine/connectors/sigv4.js";
import { InputError } from "../../../src/engine/errors.js";
import { type HttpServer, startHttpServer } from "../../support/http-server.js";
import { collect, documentsOf, makePdf, syncContext, versionsOf } from "./helpers.js";

const ACCESS_KEY = "AKIDLOCALTEST";
const SECRET = "local/secret+key";
const REGION = "eu-west-1";
const BUCKET = "team-notes";

let s3: HttpServer;
let objects: Map<string, { body: Buffer; type: string; size?: number }>;
let verified = 0;

const etag = (body: Buffer) => `"${createHash("md5").update(body).digest("hex")}"`;
const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");

/** Recomputes the SigV4 signature from the raw request as S3 does; null when it holds, else why not. */
function checkSignature(req: IncomingMessage, body: string): string | null {
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      req.headers.authorization ?? "",
    );
  if (!auth) return "malformed Authorization header";
  const [, key, day, region, signedHeaders, sig] = auth;
  if (key !== ACCESS_KEY) return "unknown access key";
  if (region !== REGION) return "wrong region";
  const amzDate = req.headers["x-amz-date"] as string;
  if (!amzDate?.startsWith(day!)) return "x-amz-date does not match the scope";
  const when = Date.parse(
    amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"),
  );
  if (Math.abs(Date.now() - when) > 15 * 60_000) return "request time too skewed";
  const payloadHash = req.headers["x-amz-content-sha256"] as string;
  if (payloadHash !== sha256Hex(body)) return "x-amz-content-sha256 does not match the body";
  const names = signedHeaders!.split(";");
  if (!names.includes("host") || !names.includes("x-amz-date") || !names.includes("x-amz-content-sha256")) {
    return "required headers are not signed";
  }
  const [rawPath, rawQuery = ""] = (req.url ?? "/").split("?");
  const query = rawQuery
    .split("&")
    .filter(Boolean)
    .map((pair) => pair.split("=").map((s) => uriEncode(decodeURIComponent(s))) as [string, string])
    .map(([k, v = ""]) => `${k}=${v}`)
    .sort()
    .join("&");
  const headers = Object.fromEntries(names.map((n) => [n, String(req.headers[n] ?? "")]));
  const { request } = canonicalRequest({ method: req.method!, path: rawPath!, query, headers, payloadHash });
  const expected = signature(
    SECRET,
    amzDate,
    REGION,
    "s3",
    stringToSign(amzDate, credentialScope(amzDate, REGION, "s3"), request),
  );
  return expected === sig ? null : "SignatureDoesNotMatch";
}

beforeEach(async () => {
  verified = 0;
  objects = new Map([
    ["docs/a.txt", { body: Buffer.from("Alpha plain text."), type: "text/plain" }],
    ["docs/b.md", { body: Buffer.from("# Bravo\n\nMarkdown."), type: "text/markdown" }],
    ["docs/space & more+.txt", { body: Buffer.from("A key that needs encoding."), type: "text/plain" }],
    ["docs/report.pdf", { body: makePdf("Quarterly report text"), type: "application/pdf" }],
    ["docs/photo.png", { body: Buffer.from("PNG"), type: "image/png" }],
    ["docs/huge.txt", { body: Buffer.from("x"), type: "text/plain", size: 60 * 1024 * 1024 }],
    ["docs/sub/", { body: Buffer.alloc(0), type: "application/x-directory" }],
    ["other/outside.txt", { body: Buffer.from("Not under the prefix."), type: "text/plain" }],
  ]);
  s3 = await startHttpServer((req, res, body) => {
    const problem = checkSignature(req, body);
    if (problem) {
      res.writeHead(403, { "content-type": "application/xml" });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message>${xml(problem)}</Message></Error>`,
      );
      return;
    }
    verified++;
    const url = new URL(req.url ?? "/", s3.url);
    const prefix = `/${BUCKET}/`;
    if (url.pathname === `/${BUCKET}/` && url.searchParams.get("list-type") === "2") {
      const keys = [...objects.keys()]
        .filter((k) => k.startsWith(url.searchParams.get("prefix") ?? ""))
        .sort();
      const start = Number(url.searchParams.get("continuation-token")?.replace("tok-", "") ?? 0);
      const page = keys.slice(start, start + 3);
      const truncated = start + 3 < keys.length;
      const contents = page
        .map((k) => {
          const o = objects.get(k)!;
          return `<Contents><Key>${xml(k)}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>${xml(etag(o.body))}</ETag><Size>${o.size ?? o.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
        })
        .join("");
      res.writeHead(200, { "content-type": "application/xml" });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${BUCKET}</Name><Prefix>${url.searchParams.get("prefix") ?? ""}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>3</MaxKeys><IsTruncated>${truncated}</IsTruncated>${contents}${truncated ? `<NextContinuationToken>tok-${start + 3}</NextContinuationToken>` : ""}</ListBucketResult>`,
      );
      return;
    }
    if (url.pathname.startsWith(prefix)) {
      const key = decodeURIComponent(url.pathname.slice(prefix.length));
      const o = objects.get(key);
      if (!o) {
        res.writeHead(404, { "content-type": "application/xml" });
        res.end("<Error><Code>NoSuchKey</Code></Error>");
        return;
      }
      res.writeHead(200, { "content-type": o.type, etag: etag(o.body) });
      res.end(o.body);
      return;
    }
    res.writeHead(404);
    res.end();
  });
});
afterEach(() => s3.close());

const provider = createS3();
const config = () => ({
  bucket: BUCKET,
  prefix: "docs/",
  region: REGION,
  endpoint: s3.url,
  accessKeyId: ACCESS_KEY,
  secretAccessKey: SECRET,
});
const gets = () => s3.requests.filter((r) => !r.path.includes("list-type")).length;

describe("s3 provider", () => {
  it("lists under the prefix across continuation pages and reads text and PDF objects, every request validly signed", async () => {
    const items = await collect(provider.sync(syncContext({ config: config() })));
    const docs = documentsOf(items);
    expect(docs.map((d) => d.externalId).sort()).toEqual([
      `s3://${BUCKET}/docs/a.txt`,
      `s3://${BUCKET}/docs/b.md`,
      `s3://${BUCKET}/docs/report.pdf`,
      `s3://${BUCKET}/docs/space & more+.txt`,
    ]);
    expect(docs.find((d) => d.externalId.endsWith("a.txt"))).toMatchObject({
      type: "text",
      content: "Alpha plain text.",
      title: "a.txt",
      version: etag(objects.get("docs/a.txt")!.body),
      metadata: { bucket: BUCKET, key: "docs/a.txt" },
    });
    expect(docs.find((d) => d.externalId.endsWith("space & more+.txt"))!.content).toBe(
      "A key that needs encoding.",
    );
    const pdf = docs.find((d) => d.externalId.endsWith("report.pdf"))!;
    expect(pdf.type).toBe("pdf");
    expect(pdf.content).toContain("Quarterly report text");
    expect(items).toContainEqual({
      kind: "skipped",
      item: `s3://${BUCKET}/docs/photo.png`,
      reason: "not a text or PDF file",
    });
    expect(items).toContainEqual({
      kind: "skipped",
      item: `s3://${BUCKET}/docs/huge.txt`,
      reason: expect.stringContaining("larger than"),
    });
    // Every request (3 list pages + 4 GETs) passed the server's own signature check.
    expect(s3.requests.filter((r) => r.path.includes("list-type"))).toHaveLength(3);
    expect(verified).toBe(s3.requests.length);
    expect(verified).toBe(7);
  });

  it("re-syncs by ETag: unchanged objects are not downloaded, removed ones drop out", async () => {
    const first = await collect(provider.sync(syncContext({ config: config() })));
    expect(gets()).toBe(4);
    objects.delete("docs/b.md");
    objects.set("docs/a.txt", { body: Buffer.from("Alpha, changed."), type: "text/plain" });
    const second = documentsOf(
      await collect(provider.sync(syncContext({ config: config(), previous: versionsOf(first) }))),
    );
    expect(gets()).toBe(5);
    expect(second.map((d) => d.externalId)).not.toContain(`s3://${BUCKET}/docs/b.md`);
    expect(second.find((d) => d.externalId.endsWith("a.txt"))!.content).toBe("Alpha, changed.");
    expect(second.find((d) => d.externalId.endsWith("report.pdf"))!.content).toBe("");
  });

  it("fails the sync with S3's error when the signature is refused", async () => {
    const run = collect(provider.sync(syncContext({ config: { ...config(), secretAccessKey: "wrong" } })));
    await expect(run).rejects.toThrow(/ListObjectsV2 team-notes: HTTP 403/);
  });

  it("validates its config, naming the field", () => {
    expect(() => provider.validateConfig({ ...config(), bucket: undefined })).toThrow(InputError);
    expect(() => provider.validateConfig({ ...config(), bucket: "Bad_Bucket" })).toThrow(/config\.bucket/);
    expect(() => provider.validateConfig({ ...config(), secretAccessKey: "" })).toThrow(
      /config\.secretAccessKey/,
    );
    expect(() => provider.validateConfig({ ...config(), endpoint: "not a url" })).toThrow(/config\.endpoint/);
  });

  it("addresses buckets path-style on custom endpoints and virtual-hosted on AWS", () => {
    const base = { bucket: "b", prefix: "", region: "us-west-2", accessKeyId: "a", secretAccessKey: "s" };
    expect(bucketUrl({ ...base, endpoint: null, forcePathStyle: false })).toBe(
      "https://b.s3.us-west-2.amazonaws.com",
    );
    expect(bucketUrl({ ...base, endpoint: "http://minio:9000", forcePathStyle: true })).toBe(
      "http://minio:9000/b",
    );
  });

  it("reads ListObjectsV2 XML with escaped keys and ETags", () => {
    const parsed = parseListObjects(
      "<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a &amp; b.txt</Key><ETag>&quot;abc&quot;</ETag><Size>3</Size></Contents><NextContinuationToken>t/1=</NextContinuationToken></ListBucketResult>",
    );
    expect(parsed).toEqual({
      objects: [{ key: "a & b.txt", etag: '"abc"', size: 3, lastModified: null }],
      nextToken: "t/1=",
    });
  });
});
