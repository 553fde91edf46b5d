/**
 * Answers that carry a long text (a document's content of megabytes) are written in pieces, the
 * event loop free between them (routes/json.ts): the text must come back exactly as stored,
 * escapes and characters outside the BMP included, wherever a piece ends.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, tempDir } from "../support/harness.js";

let dir: ReturnType<typeof tempDir>;
let server: TestServer;
beforeAll(async () => {
  dir = tempDir("memctx-large-answers-");
  server = await startTestServer(dir.path, { workers: 0 });
});
afterAll(async () => {
  await server?.close();
  dir?.remove();
});

/** About `chars` characters of text with quotes, backslashes, control characters and emoji throughout. */
const tricky = (chars: number) => {
  const unit = 'He said "ok" \\ then \n\ttabbed, then 🚢 sailed; é ✓ \u0007 ';
  let s = "";
  // An odd lead shifts the surrogate pairs across every piece boundary.
  while (s.length < chars) s += `${"x".repeat(s.length % 7)}${unit}`;
  return s;
};

describe("a long text in an answer", () => {
  it("comes back exactly as stored, from a read and from a list", async () => {
    const content = tricky(3 * 1024 * 1024 + 17);
    const added = await server.call("POST", "/ns/large/document", {
      body: { content, id: "long", metadata: { k: "v" } },
    });
    expect(added.status).toBe(200);
    const read = await server.call("GET", "/ns/large/document/long");
    expect(read.status).toBe(200);
    expect(read.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = (await read.json()) as { content: string; customId: string; metadata: unknown };
    expect(doc.content.length).toBe(content.length);
    expect(doc.content === content).toBe(true);
    expect(doc).toMatchObject({ customId: "long", metadata: { k: "v" } });
    const listed = await server.call("POST", "/ns/large/list/documents", { body: {} });
    const { documents } = (await listed.json()) as { documents: { content: string }[] };
    expect(documents[0]!.content === content).toBe(true);
  });
});
