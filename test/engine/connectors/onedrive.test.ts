import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOneDrive } from "../../../src/engine/connectors/providers/onedrive.js";
import { type HttpServer, json, startHttpServer } from "../../support/http-server.js";
import { collect, documentsOf, makePdf, syncContext, versionsOf } from "./helpers.js";

const TOKEN = "eyJ0.graph";
let api: HttpServer;
let download: HttpServer;

beforeEach(async () => {
  // Graph answers /content with a 302 to a pre-authenticated URL on another host.
  download = await startHttpServer((req, res) => {
    if (req.headers.authorization)
      return json(res, 400, { error: "the bearer token must not reach the download host" });
    const url = new URL(req.url ?? "/", download.url);
    if (url.pathname === "/dl/txt1") {
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end("Meeting notes from OneDrive.");
    }
    if (url.pathname === "/dl/docx1" && url.searchParams.get("format") === "pdf") {
      res.writeHead(200, { "content-type": "application/pdf" });
      return res.end(makePdf("Converted Word document"));
    }
    res.writeHead(404);
    res.end();
  });
  const item = (id: string, name: string, cTag: string, extra: Record<string, unknown> = {}) => ({
    id,
    name,
    cTag,
    eTag: `"{${id}},1"`,
    size: 100,
    webUrl: `https://onedrive.live.com/?id=${id}`,
    file: { mimeType: "application/octet-stream" },
    ...extra,
  });
  api = await startHttpServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return json(res, 401, { error: { code: "InvalidAuthenticationToken" } });
    const url = new URL(req.url ?? "/", api.url);
    if (url.pathname === "/v1.0/me/drive/root/delta") {
      if (url.searchParams.get("token") === "page2") {
        return json(res, 200, {
          value: [
            item("docx1", "Plan.docx", "c-docx-1"),
            item("gone1", "old.txt", "c-g", { deleted: { state: "deleted" } }),
          ],
          "@odata.deltaLink": `${api.url}/v1.0/me/drive/root/delta?token=latest`,
        });
      }
      return json(res, 200, {
        value: [
          { id: "root", name: "root", root: {}, folder: { childCount: 3 } },
          item("txt1", "notes.txt", "c-txt-1", { file: { mimeType: "text/plain" } }),
          item("img1", "photo.jpg", "c-img", { file: { mimeType: "image/jpeg" } }),
          { id: "folder1", name: "Docs", folder: { childCount: 1 } },
        ],
        "@odata.nextLink": `${api.url}/v1.0/me/drive/root/delta?token=page2`,
      });
    }
    const m = /^\/v1\.0\/me\/drive\/items\/([^/]+)\/content$/.exec(url.pathname);
    if (m) {
      res.writeHead(302, { location: `${download.url}/dl/${m[1]}${url.search}` });
      return res.end();
    }
    json(res, 404, { error: { code: "itemNotFound" } });
  });
});
afterEach(async () => {
  await api.close();
  await download.close();
});

describe("onedrive provider", () => {
  it("walks the drive's delta pages, downloads through the redirect and converts Office files to text via PDF", async () => {
    const onedrive = createOneDrive({ env: {} });
    const ctx = { config: { apiUrl: api.url }, credentials: { accessToken: TOKEN } };
    const first = await collect(onedrive.sync(syncContext(ctx)));
    const docs = documentsOf(first);
    expect(docs.map((d) => [d.externalId, d.type, d.version])).toEqual([
      ["txt1", "onedrive", "c-txt-1"],
      ["docx1", "pdf", "c-docx-1"],
    ]);
    expect(docs[0]).toMatchObject({
      title: "notes.txt",
      content: "Meeting notes from OneDrive.",
      url: "https://onedrive.live.com/?id=txt1",
    });
    expect(docs[1]!.content).toContain("Converted Word document");
    expect(first).toContainEqual({
      kind: "skipped",
      item: "photo.jpg",
      reason: expect.stringContaining("unsupported"),
    });
    expect(first.some((i) => i.kind !== "document" && i.item === "old.txt")).toBe(false);

    const before = download.requests.length;
    const second = documentsOf(
      await collect(onedrive.sync(syncContext({ ...ctx, previous: versionsOf(first) }))),
    );
    expect(second.map((d) => d.content)).toEqual(["", ""]);
    expect(download.requests.length).toBe(before);
  });
});
