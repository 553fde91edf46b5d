import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVALID_TEXT_RULE } from "../../src/api/text.js";
import { startTestServer, type TestServer, tempDir } from "../support/harness.js";

let dir: ReturnType<typeof tempDir>;
let server: TestServer;

beforeAll(async () => {
  dir = tempDir("memctx-invalid-text-");
  server = await startTestServer(dir.path);
  const res = await server.call("POST", "/ns/text/document", { body: { content: "A note.", id: "kept" } });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await server?.close();
  dir?.remove();
});

const NUL = "a\u0000b";
const LONE = "a\ud800b";

/** Requests that carry an unstorable string where each route reads one, and the field it is in. */
const cases: { what: string; method: string; path: string; body?: unknown; field: string }[] = [
  { what: "v5 content", method: "POST", path: "/ns/text/document", body: { content: NUL }, field: "content" },
  { what: "v5 id", method: "POST", path: "/ns/text/document", body: { content: "x", id: NUL }, field: "id" },
  {
    what: "v5 supporting context",
    method: "POST",
    path: "/ns/text/document",
    body: { content: "x", supportingContext: NUL },
    field: "supportingContext",
  },
  {
    what: "v5 metadata key",
    method: "POST",
    path: "/ns/text/document",
    body: { content: "x", metadata: { [NUL]: 1 } },
    field: "metadata.a\u0000b",
  },
  {
    what: "a lone surrogate in content",
    method: "POST",
    path: "/ns/text/document",
    body: { content: LONE },
    field: "content",
  },
  { what: "path id", method: "GET", path: "/ns/text/document/a%00b", field: "params.id" },
  { what: "memory path id", method: "GET", path: "/ns/text/memories/a%00b", field: "params.id" },
  { what: "search query", method: "POST", path: "/ns/text/search", body: { query: NUL }, field: "query" },
  {
    what: "filter value",
    method: "POST",
    path: "/ns/text/list/documents",
    body: { filter: { field: "a", operator: "eq", value: NUL } },
    field: "filter.value",
  },
  {
    what: "forget by meaning",
    method: "DELETE",
    path: "/ns/text/memories/semantic",
    body: { query: NUL, dryRun: true },
    field: "query",
  },
  { what: "delete ids", method: "DELETE", path: "/ns/text/document", body: { ids: [NUL] }, field: "ids.0" },
  {
    what: "namespace context",
    method: "PATCH",
    path: "/ns/text",
    body: { supportingContext: NUL },
    field: "supportingContext",
  },
  {
    what: "organization context",
    method: "PATCH",
    path: "/organization",
    body: { organizationalContext: NUL },
    field: "organizationalContext",
  },
  {
    what: "v3 customId",
    method: "POST",
    path: "/v3/documents",
    body: { content: "x", containerTag: "text", customId: NUL },
    field: "customId",
  },
  {
    what: "v3 entity context",
    method: "POST",
    path: "/v3/documents",
    body: { content: "x", containerTag: "text", entityContext: NUL },
    field: "entityContext",
  },
  {
    what: "v3 batch content",
    method: "POST",
    path: "/v3/documents/batch",
    body: { containerTag: "text", documents: ["fine", NUL] },
    field: "documents.1",
  },
  { what: "v3 path id", method: "GET", path: "/v3/documents/a%00b", field: "params.id" },
  {
    what: "v4 conversation id",
    method: "POST",
    path: "/v4/conversations",
    body: { conversationId: NUL, containerTags: ["text"], messages: [{ role: "user", content: "hi" }] },
    field: "conversationId",
  },
  {
    what: "v4 memory",
    method: "POST",
    path: "/v4/memories",
    body: { containerTag: "text", memories: [{ content: NUL }] },
    field: "memories.0.content",
  },
  {
    what: "v4 search",
    method: "POST",
    path: "/v4/search",
    body: { q: NUL, containerTag: "text" },
    field: "q",
  },
];

describe("text no store can keep", () => {
  it.each(cases)("answers 400 naming the field for $what", async ({ method, path, body, field }) => {
    const res = await server.call(method, path, body === undefined ? {} : { body });
    const answer = (await res.json()) as { error: string; details?: string };
    expect(res.status, JSON.stringify(answer)).toBe(400);
    expect(answer.details).toBe(`${field}: ${INVALID_TEXT_RULE}`);
  });

  it("changes nothing: the refused adds stored no document", async () => {
    const res = await server.call("POST", "/ns/text/list/documents?limit=100", { body: {} });
    const { documents } = (await res.json()) as { documents: { customId: string | null }[] };
    expect(documents.map((d) => d.customId)).toEqual(["kept"]);
  });

  it("still takes text with every other control character", async () => {
    const res = await server.call("POST", "/ns/text/document", {
      body: { content: "tab\tbell\u0007escape\u001b end", id: "controls" },
    });
    expect(res.status).toBe(200);
  });
});
