import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGmail, decodeBase64Url } from "../../../src/engine/connectors/providers/gmail.js";
import { type HttpServer, json, startHttpServer } from "../../support/http-server.js";
import { collect, documentsOf, syncContext, versionsOf } from "./helpers.js";

const TOKEN = "ya29.gmail";
const b64url = (s: string) => Buffer.from(s).toString("base64url");
let api: HttpServer;

beforeEach(async () => {
  const messages: Record<string, unknown> = {
    m1: {
      id: "m1",
      threadId: "t1",
      labelIds: ["INBOX", "UNREAD"],
      internalDate: String(Date.parse("2026-03-04T09:00:00Z")),
      snippet: "Lunch?",
      payload: {
        mimeType: "multipart/mixed",
        headers: [
          { name: "From", value: "Ana <ana@example.com>" },
          { name: "To", value: "me@example.com" },
          { name: "Subject", value: "Lunch on Friday" },
        ],
        parts: [
          {
            mimeType: "multipart/alternative",
            parts: [
              {
                mimeType: "text/plain",
                body: { size: 30, data: b64url("Shall we meet at noon? ünïcode ✓") },
              },
              {
                mimeType: "text/html",
                body: { size: 40, data: b64url("<p>Shall we meet at <b>noon</b>?</p>") },
              },
            ],
          },
          { mimeType: "text/plain", filename: "menu.txt", body: { attachmentId: "att1", size: 100 } },
        ],
      },
    },
    m2: {
      id: "m2",
      threadId: "t2",
      labelIds: ["INBOX"],
      internalDate: String(Date.parse("2026-03-03T09:00:00Z")),
      payload: {
        mimeType: "text/html",
        headers: [{ name: "Subject", value: "Newsletter" }],
        body: { size: 50, data: b64url("<html><body><h1>News</h1><p>Only HTML here.</p></body></html>") },
      },
    },
  };
  api = await startHttpServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return json(res, 401, { error: { code: 401 } });
    const url = new URL(req.url ?? "/", api.url);
    if (url.pathname === "/gmail/v1/users/me/messages") {
      if (url.searchParams.getAll("labelIds").join() !== "INBOX")
        return json(res, 400, { error: { message: "INBOX expected" } });
      return url.searchParams.get("pageToken") === "n2"
        ? json(res, 200, { messages: [{ id: "m2", threadId: "t2" }], resultSizeEstimate: 2 })
        : json(res, 200, {
            messages: [{ id: "m1", threadId: "t1" }],
            nextPageToken: "n2",
            resultSizeEstimate: 2,
          });
    }
    const m = /^\/gmail\/v1\/users\/me\/messages\/([^/]+)$/.exec(url.pathname);
    if (m && url.searchParams.get("format") === "full" && messages[m[1]!])
      return json(res, 200, messages[m[1]!]);
    json(res, 404, { error: { code: 404 } });
  });
});
afterEach(() => api.close());

describe("gmail provider", () => {
  it("syncs INBOX messages with their plain-text body (HTML when there is none) and never refetches a known message", async () => {
    const gmail = createGmail({ env: {} });
    const ctx = { config: { apiUrl: api.url }, credentials: { accessToken: TOKEN } };
    const first = await collect(gmail.sync(syncContext(ctx)));
    const docs = documentsOf(first);
    expect(docs.map((d) => d.externalId)).toEqual(["m1", "m2"]);
    expect(docs[0]).toMatchObject({
      title: "Lunch on Friday",
      type: "text",
      version: "m1",
      content:
        "From: Ana <ana@example.com>\nTo: me@example.com\nDate: 2026-03-04T09:00:00.000Z\nSubject: Lunch on Friday\n\nShall we meet at noon? ünïcode ✓",
      metadata: {
        threadId: "t1",
        from: "Ana <ana@example.com>",
        labels: ["INBOX", "UNREAD"],
        date: "2026-03-04T09:00:00.000Z",
      },
    });
    expect(docs[1]!.content).toContain("Only HTML here.");
    expect(docs[1]!.content).not.toContain("<p>");

    const gets = () => api.requests.filter((r) => r.path.includes("format=full")).length;
    expect(gets()).toBe(2);
    await collect(gmail.sync(syncContext({ ...ctx, previous: versionsOf(first) })));
    expect(gets()).toBe(2);
  });

  it("decodes base64url without padding", () => {
    expect(decodeBase64Url("SGk_-w")).toBe(Buffer.from([0x48, 0x69, 0x3f, 0xfb]).toString("utf8"));
  });
});
