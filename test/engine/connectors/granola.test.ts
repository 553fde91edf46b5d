import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGranola } from "../../../src/engine/connectors/providers/granola.js";
import { InputError } from "../../../src/engine/errors.js";
import { type HttpServer, json, startHttpServer } from "../../support/http-server.js";
import { collect, documentsOf, syncContext, versionsOf } from "./helpers.js";

const KEY = "grn_testkey";
let api: HttpServer;

beforeEach(async () => {
  api = await startHttpServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${KEY}`) return json(res, 401, { message: "invalid api key" });
    const url = new URL(req.url ?? "/", api.url);
    if (url.pathname === "/v1/notes") {
      const summary = (id: string, title: string, updated: string) => ({
        id,
        object: "note",
        title,
        created_at: "2026-02-01T10:00:00Z",
        updated_at: updated,
      });
      return url.searchParams.get("cursor") === "c2"
        ? json(res, 200, {
            notes: [summary("not_2", "Retro", "2026-02-02T00:00:00Z")],
            hasMore: false,
            cursor: null,
          })
        : json(res, 200, {
            notes: [summary("not_1", "Kickoff", "2026-02-01T12:00:00Z")],
            hasMore: true,
            cursor: "c2",
          });
    }
    const m = /^\/v1\/notes\/([^/]+)$/.exec(url.pathname);
    if (m && url.searchParams.get("include") === "transcript") {
      return json(res, 200, {
        id: m[1],
        object: "note",
        title: m[1] === "not_1" ? "Kickoff" : "Retro",
        created_at: "2026-02-01T10:00:00Z",
        attendees: [
          { name: "Ana", email: "ana@example.com" },
          { name: null, email: "bo@example.com" },
        ],
        summary_markdown: "## Decisions\n- Ship in May",
        transcript: [
          { speaker: { source: "microphone", name: "Ana" }, text: "Let's ship in May." },
          { speaker: "Bo", text: "Agreed." },
        ],
      });
    }
    json(res, 404, { message: "not found" });
  });
});
afterEach(() => api.close());

describe("granola provider", () => {
  it("syncs each note with its summary and transcript as a granola document, skipping unchanged notes", async () => {
    const granola = createGranola();
    const config = { apiKey: KEY, apiUrl: api.url };
    const first = await collect(granola.sync(syncContext({ config })));
    const docs = documentsOf(first);
    expect(docs.map((d) => d.externalId)).toEqual(["not_1", "not_2"]);
    expect(docs[0]).toMatchObject({
      type: "granola",
      title: "Kickoff",
      version: "2026-02-01T12:00:00Z",
      metadata: {
        granolaNoteId: "not_1",
        attendees: ["Ana", "bo@example.com"],
        date: "2026-02-01T10:00:00Z",
      },
      content:
        "# Kickoff\n\nAttendees: Ana, bo@example.com\n\n## Decisions\n- Ship in May\n\nTranscript:\nAna: Let's ship in May.\nBo: Agreed.",
    });
    const reads = () => api.requests.filter((r) => r.path.includes("include=transcript")).length;
    expect(reads()).toBe(2);
    await collect(granola.sync(syncContext({ config, previous: versionsOf(first) })));
    expect(reads()).toBe(2);
  });

  it("requires an API key in config", () => {
    expect(() => createGranola().validateConfig({})).toThrow(InputError);
    expect(() => createGranola().validateConfig({})).toThrow(/config\.apiKey/);
  });
});
