import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGoogleDrive, driveQuery } from "../../../src/engine/connectors/providers/google-drive.js";
import { type HttpServer, json, startHttpServer } from "../../support/http-server.js";
import { collect, documentsOf, makePdf, syncContext, versionsOf } from "./helpers.js";

const TOKEN = "ya29.drive";
let api: HttpServer;

beforeEach(async () => {
  const files = [
    {
      id: "doc1",
      name: "Roadmap",
      mimeType: "application/vnd.google-apps.document",
      version: "12",
      modifiedTime: "2026-01-01T00:00:00Z",
      webViewLink: "https://docs.google.com/document/d/doc1/edit",
    },
    {
      id: "sheet1",
      name: "Budget",
      mimeType: "application/vnd.google-apps.spreadsheet",
      version: "3",
      webViewLink: "https://docs.google.com/spreadsheets/d/sheet1",
    },
    { id: "txt1", name: "notes.md", mimeType: "text/markdown", version: "5", size: "20" },
    { id: "pdf1", name: "paper.pdf", mimeType: "application/pdf", version: "1", size: "900" },
    { id: "big1", name: "dump.txt", mimeType: "text/plain", version: "1", size: String(60 * 1024 * 1024) },
  ];
  api = await startHttpServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return json(res, 401, { error: { code: 401, message: "Invalid Credentials" } });
    const url = new URL(req.url ?? "/", api.url);
    if (url.pathname === "/drive/v3/files") {
      if (
        !url.searchParams.get("q")?.includes("trashed = false") ||
        !url.searchParams.get("fields")?.includes("nextPageToken")
      ) {
        return json(res, 400, { error: { message: "bad query" } });
      }
      return url.searchParams.get("pageToken") === "p2"
        ? json(res, 200, { kind: "drive#fileList", files: files.slice(3) })
        : json(res, 200, { kind: "drive#fileList", files: files.slice(0, 3), nextPageToken: "p2" });
    }
    const m = /^\/drive\/v3\/files\/([^/]+)(\/export)?$/.exec(url.pathname);
    if (m?.[2] && m[1] === "doc1" && url.searchParams.get("mimeType") === "text/plain") {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      return res.end("Roadmap: launch in Q3.");
    }
    if (m?.[2] && m[1] === "sheet1" && url.searchParams.get("mimeType") === "text/csv") {
      res.writeHead(200, { "content-type": "text/csv" });
      return res.end("item,cost\nvenue,100");
    }
    if (m && !m[2] && url.searchParams.get("alt") === "media") {
      if (m[1] === "txt1") {
        res.writeHead(200, { "content-type": "text/markdown" });
        return res.end("# Notes\nfrom Drive");
      }
      if (m[1] === "pdf1") {
        res.writeHead(200, { "content-type": "application/pdf" });
        return res.end(makePdf("Drive paper text"));
      }
    }
    json(res, 404, { error: { code: 404, message: "File not found" } });
  });
});
afterEach(() => api.close());

describe("google-drive provider", () => {
  it("exports Google Docs and Sheets as text, downloads text and PDF files, and skips unchanged versions", async () => {
    const drive = createGoogleDrive({ env: {} });
    const ctx = { config: { apiUrl: api.url }, credentials: { accessToken: TOKEN } };
    const first = await collect(drive.sync(syncContext(ctx)));
    const docs = documentsOf(first);
    expect(docs.map((d) => [d.externalId, d.type])).toEqual([
      ["doc1", "google_doc"],
      ["sheet1", "google_sheet"],
      ["txt1", "text"],
      ["pdf1", "pdf"],
    ]);
    expect(docs[0]).toMatchObject({
      title: "Roadmap",
      content: "Roadmap: launch in Q3.",
      version: "12",
      url: "https://docs.google.com/document/d/doc1/edit",
    });
    expect(docs[1]!.content).toBe("item,cost\nvenue,100");
    expect(docs[3]!.content).toContain("Drive paper text");
    expect(first).toContainEqual({
      kind: "skipped",
      item: "big1",
      reason: expect.stringContaining("larger than"),
    });

    const downloads = () =>
      api.requests.filter((r) => r.path.includes("/export") || r.path.includes("alt=media")).length;
    expect(downloads()).toBe(4);
    await collect(drive.sync(syncContext({ ...ctx, previous: versionsOf(first) })));
    expect(downloads()).toBe(4);
  });

  it("narrows the files.list query to selected folders", () => {
    const q = driveQuery({ folders: ["f1", "it's"] });
    expect(q).toContain("trashed = false");
    expect(q).toContain("('f1' in parents or 'it\\'s' in parents)");
  });
});
