import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretScreeningFromEnv } from "../../src/engine/services/screening.js";
import { API_KEY, startEngine, type TestEngine } from "../mcp/helpers.js";
import { type HttpServer, startHttpServer } from "../support/http-server.js";
import { until } from "../support/wait.js";

const AWS_KEY = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

/** A real engine on a SQLite file with the offline extractor, reached through a real client. */
const open = (opts: { secretScreening?: boolean } = {}): Promise<TestEngine> =>
  startEngine({ allowPrivateNetwork: true, ...opts });

let t: TestEngine;
let site: HttpServer;
beforeAll(async () => {
  t = await open();
  site = await startHttpServer((req, res) => {
    if (req.url === "/router.txt") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("Router notes. The admin password is Tr0ub4dor&3 and the router sits in the hall.");
    } else if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<!doctype html><html><head><title>Deploy notes</title></head><body><main><p>Deploys use the key ${AWS_KEY} from the vault.</p><p>Deploys run at noon.</p></main></body></html>`,
      );
    } else {
      res.writeHead(404).end();
    }
  });
});
afterAll(async () => {
  await site.close();
  await t.close();
});

describe("secret screening on every add path", () => {
  it("redacts what a v5 add and an append send, and the answer says what", async () => {
    const ns = t.client.ns("paths");
    const added = await ns.documents.add({
      id: "note-1",
      content: "My gym PIN is 4417 and my card is 4111 1111 1111 1111. I train on Mondays.",
    });
    expect(added.redacted).toEqual([
      { kind: "card number", count: 1 },
      { kind: "PIN", count: 1 },
    ]);
    const doc = await ns.documents.get("note-1");
    expect(doc.content).toBe(
      "My gym PIN is [redacted: PIN] and my card is [redacted: card number]. I train on Mondays.",
    );

    const turn = await ns.documents.add({
      id: "chat-1",
      append: true,
      content: "user: the wifi password is sunflower22",
    });
    expect(turn).toMatchObject({ lines: 1, redacted: [{ kind: "password", count: 1 }] });
    const plain = await ns.documents.add({ id: "chat-1", append: true, content: "user: I like tea" });
    // Nothing found: the answer is as it was before screening existed.
    expect(plain.redacted).toBeUndefined();
    expect((await ns.documents.get("chat-1")).content).toBe(
      "user: the wifi password is [redacted: password]\nuser: I like tea",
    );
  });

  it("redacts the legacy adds: v3 documents, v4 conversations, batches and v4 memories", async () => {
    const v3 = await t.client.legacy.documents.add({
      containerTag: "legacy",
      customId: "v3-note",
      content: `Use ${AWS_KEY} with ${AWS_SECRET} for backups.`,
    });
    expect(v3.redacted).toEqual([
      { kind: "AWS access key", count: 1 },
      { kind: "AWS secret key", count: 1 },
    ]);
    const conversation = await t.client.legacy.conversations.add({
      containerTags: ["legacy"],
      conversationId: "conv-9",
      messages: [{ role: "user", content: "Rent goes to DE89 3704 0044 0532 0130 00." }],
    });
    expect(conversation.redacted).toEqual([{ kind: "IBAN", count: 1 }]);
    const batch = await t.client.batch.add({
      containerTag: "legacy",
      documents: [{ content: "The door code is 2580." }, { content: "Nothing secret here." }],
    });
    expect(batch.results[0]!.redacted).toEqual([{ kind: "PIN", count: 1 }]);
    expect(batch.results[1]!.redacted).toBeUndefined();
    const written = await t.client.legacy.memories.add({
      containerTag: "legacy",
      memories: [{ content: "The user's safe code is 90210." }],
    });
    expect(written.redacted).toEqual([{ kind: "PIN", count: 1 }]);
    expect(written.memories[0]!.memory).toBe("The user's safe code is [redacted: PIN].");
    const updated = await t.client.legacy.memories.update({
      containerTag: "legacy",
      id: written.memories[0]!.id,
      newContent: "The user's safe code is 90211.",
    });
    expect(updated.memory).toBe("The user's safe code is [redacted: PIN].");

    const stored = await t.client.legacy.documents.list({ containerTags: ["legacy"], limit: 10 });
    const all = JSON.stringify(stored);
    for (const secret of [AWS_KEY, AWS_SECRET, "DE89 3704", "2580"]) expect(all).not.toContain(secret);
  });

  it("screens a fetched page's and an uploaded file's text once it is read", async () => {
    const ns = t.client.ns("converted");
    const page = await ns.documents.add({ id: "router", content: `${site.url}/router.txt` });
    // The URL itself holds no secret: nothing to say yet.
    expect(page.redacted).toBeUndefined();
    const file = await ns.documents.addFile({
      id: "bank",
      file: new TextEncoder().encode("Bank details: IBAN GB82 WEST 1234 5698 7654 32, branch in Leeds."),
      filename: "bank.txt",
    });
    for (const id of [page.id, file.id]) await ns.documents.waitFor(id, { until: "memories" });
    const chunks = JSON.stringify(await ns.chunks.list({ limit: 100 }));
    expect(chunks).not.toContain("Tr0ub4dor");
    expect(chunks).not.toContain("GB82");
    expect(chunks).toContain("[redacted: password]");
    expect(chunks).toContain("[redacted: IBAN]");
    expect(chunks).toContain("branch in Leeds");
    const memories = JSON.stringify(await ns.memories.list({ limit: 100 }));
    expect(memories).not.toContain("Tr0ub4dor");
    expect(memories).not.toContain("GB82");
  });

  it("screens what a connector brings", async () => {
    const ns = t.client.ns("synced");
    await ns.connectors.create({ provider: "web-crawler", config: { startUrl: `${site.url}/` } });
    const [doc] = await until(
      async () => (await ns.documents.list({ limit: 10 })).documents,
      (docs) => docs.length > 0 && docs.every((d) => d.system.status === "done"),
      "the crawled page, processed",
    );
    const read = await ns.documents.get(doc!.id, { include: ["chunks"] });
    expect(JSON.stringify(read)).not.toContain(AWS_KEY);
    expect(read.content).toContain("[redacted: AWS access key]");
    expect(read.content).toContain("Deploys run at noon.");
  });
});

describe("turning secret screening off", () => {
  it("a namespace's setting keeps what it is told as sent, and null goes back to the deployment's", async () => {
    const ns = t.client.ns("vault");
    expect((await ns.update({ secretScreening: false })).secretScreening).toBe(false);
    const kept = await ns.documents.add({ content: "The vault PIN is 1234." });
    expect(kept.redacted).toBeUndefined();
    expect((await ns.documents.get(kept.id)).content).toBe("The vault PIN is 1234.");
    // Its supporting context is another setting: changing one leaves the other.
    const record = await ns.update({ supportingContext: "The user's vault." });
    expect(record).toMatchObject({ secretScreening: false, supportingContext: "The user's vault." });
    expect((await ns.update({ secretScreening: null })).secretScreening).toBe(true);
    expect((await ns.documents.add({ content: "The vault PIN is 5678." })).redacted).toEqual([
      { kind: "PIN", count: 1 },
    ]);
  });

  it("a deployment's setting holds for every namespace without one of its own", async () => {
    const off = await open({ secretScreening: false });
    try {
      const ns = off.client.ns("any");
      expect((await ns.documents.add({ content: "Card 4111 1111 1111 1111." })).redacted).toBeUndefined();
      expect((await ns.get()).secretScreening).toBe(false);
      await ns.update({ secretScreening: true });
      expect((await ns.documents.add({ content: "Card 5555 5555 5555 4444." })).redacted).toEqual([
        { kind: "card number", count: 1 },
      ]);
    } finally {
      await off.close();
    }
  });

  it("reads MEMCTX_SECRET_SCREENING as on or off, and stops on anything else", () => {
    expect(secretScreeningFromEnv({})).toBe(true);
    expect(secretScreeningFromEnv({ MEMCTX_SECRET_SCREENING: "off" })).toBe(false);
    expect(secretScreeningFromEnv({ MEMCTX_SECRET_SCREENING: "ON" })).toBe(true);
    expect(() => secretScreeningFromEnv({ MEMCTX_SECRET_SCREENING: "maybe" })).toThrow(
      /MEMCTX_SECRET_SCREENING must be "on" or "off"/,
    );
  });

  it("refuses a settings change that says nothing or a setting of the wrong type, naming the field", async () => {
    const call = (body: unknown) =>
      t.engine.fetch(
        new Request("http://memctx.local/ns/vault", {
          method: "PATCH",
          headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
    const empty = await call({});
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { details: string }).details).toMatch(
      /supportingContext.*send supportingContext or secretScreening/,
    );
    const wrong = await call({ secretScreening: "off" });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { details: string }).details).toMatch(
      /secretScreening.*true, false or null/,
    );
  });
});
