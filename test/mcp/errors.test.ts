import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MemoryClient,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from "../../src/client/index.js";
import { describeClientError } from "../../src/mcp/errors.js";
import { call, connect, startEngine, type TestEngine, text } from "./helpers.js";

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe("errors a model can act on", () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(() => t.close());

  it("says to check MEMCTX_API_KEY when the key is rejected", async () => {
    const client = new MemoryClient({ apiKey: "mk_wrong", fetch: t.engine.fetch });
    const s = await connect({ client, apiUrl: "http://127.0.0.1:8787" });
    try {
      const res = await call(s.mcp, "list");
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/401.*MEMCTX_API_KEY/s);
    } finally {
      await s.close();
    }
  });

  it("asks whether the server at MEMCTX_API_URL is running when nothing answers", async () => {
    const apiUrl = `http://127.0.0.1:${await closedPort()}`;
    const client = new MemoryClient({ baseUrl: apiUrl, apiKey: "mk_any", maxRetries: 0 });
    const s = await connect({ client, apiUrl });
    try {
      const res = await call(s.mcp, "add_memory", { content: "hello" });
      expect(res.isError).toBe(true);
      expect(text(res)).toContain(`Could not reach the memory service at ${apiUrl}`);
      expect(text(res)).toContain("Is the server at MEMCTX_API_URL running?");
    } finally {
      await s.close();
      await client.close();
    }
  });

  it("names the field and the rule of an invalid filter", async () => {
    const s = await connect({ client: t.client });
    try {
      const res = await call(s.mcp, "list", { filter: { field: "has space", operator: "eq", value: "x" } });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/filter/);
      expect(text(res)).toMatch(/\^\[a-zA-Z0-9_\.-\]\+\$/);
    } finally {
      await s.close();
    }
  });

  it("turns 403, 404 and 429 into a next step", () => {
    const ctx = { apiUrl: undefined };
    expect(
      describeClientError(
        new NotFoundError("404 Not found", { status: 404, body: { error: "Document not found" } }),
        ctx,
      ),
    ).toMatch(/Not found \(404\): Document not found\. Check the id/);
    expect(describeClientError(new PermissionDeniedError("403", { status: 403 }), ctx)).toMatch(
      /do not retry/,
    );
    const limited = new RateLimitError("429", { status: 429, headers: new Headers({ "retry-after": "7" }) });
    expect(describeClientError(limited, ctx)).toMatch(/Wait 7 seconds/);
  });

  it("leaves bugs as bugs: an unexpected error is not dressed up as advice", () => {
    expect(describeClientError(new TypeError("x is undefined"), { apiUrl: undefined })).toBeUndefined();
  });
});
