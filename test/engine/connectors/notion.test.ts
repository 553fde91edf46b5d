import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNotion, NOTION_VERSION } from "../../../src/engine/connectors/providers/notion.js";
import { type HttpServer, json, startHttpServer } from "../../support/http-server.js";
import { collect, documentsOf, syncContext, versionsOf } from "./helpers.js";

const TOKEN = "secret_notion";
const rt = (text: string) => [{ type: "text", text: { content: text }, plain_text: text }];
const page = (id: string, title: string, edited: string) => ({
  object: "page",
  id,
  url: `https://www.notion.so/${id}`,
  last_edited_time: edited,
  archived: false,
  properties: { Name: { id: "title", type: "title", title: rt(title) } },
});

let api: HttpServer;
let edited: string;
let searchBodies: Record<string, unknown>[];

beforeEach(async () => {
  edited = "2026-01-01T10:00:00.000Z";
  searchBodies = [];
  const blocks: Record<string, { results: unknown[]; has_more: boolean; next_cursor: string | null }[]> = {
    "page-1": [
      {
        results: [
          {
            object: "block",
            id: "b1",
            type: "heading_1",
            has_children: false,
            heading_1: { rich_text: rt("Project plan") },
          },
          {
            object: "block",
            id: "b2",
            type: "paragraph",
            has_children: false,
            paragraph: { rich_text: rt("We ship in May.") },
          },
          {
            object: "block",
            id: "b3",
            type: "bulleted_list_item",
            has_children: true,
            bulleted_list_item: { rich_text: rt("Risks") },
          },
        ],
        has_more: true,
        next_cursor: "cur-2",
      },
      {
        results: [
          {
            object: "block",
            id: "b4",
            type: "to_do",
            has_children: false,
            to_do: { rich_text: rt("Book venue"), checked: true },
          },
          {
            object: "block",
            id: "b5",
            type: "child_page",
            has_children: true,
            child_page: { title: "Sub page" },
          },
        ],
        has_more: false,
        next_cursor: null,
      },
    ],
    b3: [
      {
        results: [
          {
            object: "block",
            id: "b6",
            type: "paragraph",
            has_children: false,
            paragraph: { rich_text: rt("Supplier delay") },
          },
        ],
        has_more: false,
        next_cursor: null,
      },
    ],
    "page-2": [
      {
        results: [
          {
            object: "block",
            id: "c1",
            type: "quote",
            has_children: false,
            quote: { rich_text: rt("Less is more") },
          },
        ],
        has_more: false,
        next_cursor: null,
      },
    ],
  };
  api = await startHttpServer((req, res, body) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return json(res, 401, { object: "error", status: 401, code: "unauthorized" });
    if (req.headers["notion-version"] !== NOTION_VERSION)
      return json(res, 400, { object: "error", code: "missing_version" });
    const url = new URL(req.url ?? "/", api.url);
    if (req.method === "POST" && url.pathname === "/v1/search") {
      const q = JSON.parse(body) as Record<string, unknown>;
      searchBodies.push(q);
      if (!q.start_cursor) {
        return json(res, 200, {
          object: "list",
          results: [page("page-1", "Plan", edited)],
          has_more: true,
          next_cursor: "s-2",
        });
      }
      return json(res, 200, {
        object: "list",
        results: [page("page-2", "Quotes", "2026-01-02T00:00:00.000Z")],
        has_more: false,
        next_cursor: null,
      });
    }
    const m = /^\/v1\/blocks\/([^/]+)\/children$/.exec(url.pathname);
    if (req.method === "GET" && m) {
      const pages = blocks[m[1]!] ?? [{ results: [], has_more: false, next_cursor: null }];
      return json(res, 200, {
        object: "list",
        ...(url.searchParams.get("start_cursor") ? pages[1] : pages[0]),
      });
    }
    json(res, 404, { object: "error", code: "object_not_found" });
  });
});
afterEach(() => api.close());

describe("notion provider", () => {
  it("syncs the pages search finds, rendering nested blocks as text, and skips unedited pages on re-sync", async () => {
    const notion = createNotion({ env: {} });
    const ctx = { config: { apiUrl: api.url }, credentials: { accessToken: TOKEN } };
    const first = await collect(notion.sync(syncContext(ctx)));
    const docs = documentsOf(first);
    expect(docs.map((d) => d.externalId)).toEqual(["page-1", "page-2"]);
    expect(docs[0]).toMatchObject({
      type: "notion_doc",
      title: "Plan",
      url: "https://www.notion.so/page-1",
      version: "2026-01-01T10:00:00.000Z",
      content: "# Project plan\nWe ship in May.\n- Risks\n  Supplier delay\n[x] Book venue\n[Sub page]",
    });
    expect(docs[1]!.content).toBe("> Less is more");
    expect(searchBodies[0]).toEqual({ filter: { property: "object", value: "page" }, page_size: 100 });
    expect(searchBodies[1]).toMatchObject({ start_cursor: "s-2" });
    // The child page's own blocks are not read as part of its parent.
    expect(api.requests.some((r) => r.path.startsWith("/v1/blocks/b5/"))).toBe(false);

    edited = "2026-01-03T00:00:00.000Z";
    api.requests.length = 0;
    const second = documentsOf(
      await collect(notion.sync(syncContext({ ...ctx, previous: versionsOf(first) }))),
    );
    expect(second.find((d) => d.externalId === "page-1")!.version).toBe("2026-01-03T00:00:00.000Z");
    expect(second.find((d) => d.externalId === "page-2")!.content).toBe("");
    expect(api.requests.some((r) => r.path.startsWith("/v1/blocks/page-2/"))).toBe(false);
  });
});
