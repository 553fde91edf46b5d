import { describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APIUserAbortError,
  BadRequestError,
  backoffMs,
  InternalServerError,
  MemoryClient,
  NotFoundError,
  parseRetryAfter,
  RateLimitError,
} from "../../src/client/index.js";
import { closedPort, documentBody, scriptedServerPerFile } from "../support/scripted-server.js";
import { until } from "../support/wait.js";

// Default maxRetries (2); a tiny backoff base keeps the tests fast.
const { server, client } = scriptedServerPerFile({ retryBaseMs: 1 });

const rateLimited = (retryAfter: string) => ({
  status: 429,
  headers: { "retry-after": retryAfter },
  json: { error: "rate limited" },
});

describe("retries", () => {
  it("retries a 429 with Retry-After: 0 and returns the later success", async () => {
    server.reply(rateLimited("0"), rateLimited("0"), { json: documentBody("d1") });
    const doc = await client.ns("alice").documents.get("d1");
    expect(doc.id).toBe("d1");
    expect(server.received).toHaveLength(3);
  });

  it("waits for Retry-After seconds before the next attempt", async () => {
    server.reply(rateLimited("1"), { json: documentBody("d1") });
    await client.ns("alice").documents.get("d1");
    expect(server.received).toHaveLength(2);
    // A lower bound only: the backoff base is 1 ms, so this gap can only come from the header.
    const [first, second] = server.received;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(900);
  });

  it("gives up after the default 2 retries with the last error", async () => {
    server.fallback = { status: 503, json: { error: "unavailable" } };
    await expect(client.ns("alice").documents.get("d1")).rejects.toBeInstanceOf(InternalServerError);
    expect(server.received).toHaveLength(3);
  });

  it("takes maxRetries per call and per client", async () => {
    server.fallback = { status: 500, json: { error: "boom" } };
    await expect(client.ns("alice").documents.get("d1", undefined, { maxRetries: 0 })).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(server.received).toHaveLength(1);
    server.reset();
    server.fallback = { status: 500, json: { error: "boom" } };
    const c = new MemoryClient({ baseUrl: server.url, apiKey: "k", maxRetries: 4, retryBaseMs: 1 });
    try {
      await expect(c.ns("alice").documents.get("d1")).rejects.toBeInstanceOf(InternalServerError);
      expect(server.received).toHaveLength(5);
    } finally {
      await c.close();
    }
  });

  it("does not retry 400, 404 or 501", async () => {
    server.reply({ status: 400, json: { error: "bad" } });
    await expect(client.ns("alice").documents.get("d1")).rejects.toBeInstanceOf(BadRequestError);
    server.reply({ status: 404, json: { error: "missing" } });
    await expect(client.ns("alice").documents.get("d1")).rejects.toBeInstanceOf(NotFoundError);
    server.reply({ status: 501, json: { error: "not implemented" } });
    await expect(client.ns("alice").documents.get("d1")).rejects.toBeInstanceOf(InternalServerError);
    expect(server.received).toHaveLength(3);
  });

  it("does not retry an add without an id (not idempotent)", async () => {
    server.fallback = { status: 503, json: { error: "unavailable" } };
    await expect(client.ns("alice").documents.add({ content: "x" })).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(server.received).toHaveLength(1);
    server.reset();
    server.fallback = rateLimited("0");
    await expect(client.ns("alice").documents.add({ content: "x" })).rejects.toBeInstanceOf(RateLimitError);
    expect(server.received).toHaveLength(1);
  });

  it("retries an add that names its id (an upsert)", async () => {
    server.reply(
      { status: 503, json: { error: "unavailable" } },
      { json: { id: "doc-1", status: "queued" } },
    );
    const res = await client.ns("alice").documents.add({ content: "x", id: "doc-1" });
    expect(res.id).toBe("doc-1");
    expect(server.received).toHaveLength(2);
    expect(server.received[1]?.json).toEqual(server.received[0]?.json);
  });

  it("retries a batch only when every item has a customId", async () => {
    const ok = { json: { results: [{ id: "a", status: "queued" }], failed: 0, success: 1 } };
    server.reply({ status: 500, json: { error: "boom" } }, ok);
    await client.batch.add({ documents: [{ content: "a", customId: "a" }] });
    expect(server.received).toHaveLength(2);

    server.reset();
    server.reply({ status: 500, json: { error: "boom" } }, ok);
    await expect(
      client.batch.add({ documents: [{ content: "a", customId: "a" }, { content: "b" }] }),
    ).rejects.toBeInstanceOf(InternalServerError);
    expect(server.received).toHaveLength(1);

    server.reset();
    server.reply({ status: 500, json: { error: "boom" } }, ok);
    await expect(client.batch.add({ documents: ["a"] })).rejects.toBeInstanceOf(InternalServerError);
    expect(server.received).toHaveLength(1);
  });

  it("does not retry a connector sync (not idempotent)", async () => {
    server.fallback = { status: 503, json: { error: "unavailable" } };
    await expect(client.ns("alice").connectors.sync("c1")).rejects.toBeInstanceOf(InternalServerError);
    expect(server.received).toHaveLength(1);
  });

  it("retries a dropped connection on an idempotent request", async () => {
    server.reply("destroy", { json: documentBody("d1") });
    const doc = await client.ns("alice").documents.get("d1");
    expect(doc.id).toBe("d1");
    expect(server.received).toHaveLength(2);
  });

  it("retries a refused connection, then throws APIConnectionError", async () => {
    const port = await closedPort();
    const c = new MemoryClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "k", retryBaseMs: 1 });
    try {
      await expect(c.organization.get()).rejects.toBeInstanceOf(APIConnectionError);
    } finally {
      await c.close();
    }
  });
});

describe("abort while waiting to retry", () => {
  it("ends the backoff wait at once with APIUserAbortError and sends nothing more", async () => {
    const c = new MemoryClient({ baseUrl: server.url, apiKey: "k", retryBaseMs: 60_000 });
    try {
      server.fallback = { status: 503, json: { error: "unavailable" } };
      const ac = new AbortController();
      const p = c.ns("alice").documents.get("d1", undefined, { signal: ac.signal });
      await until(
        () => server.received.length,
        (n) => n > 0,
        "the request to arrive",
      );
      ac.abort();
      await expect(p).rejects.toBeInstanceOf(APIUserAbortError);
      expect(server.received).toHaveLength(1);
    } finally {
      await c.close();
    }
  });
});

describe("backoff", () => {
  it("reads Retry-After as seconds or an HTTP date, capped at 60 s", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter("2", now)).toBe(2000);
    expect(parseRetryAfter("3600", now)).toBe(60_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("doubles from the base, caps at 8 s and jitters by at most 25%", () => {
    expect(backoffMs(0, 500, () => 0.5)).toBe(500);
    expect(backoffMs(1, 500, () => 0.5)).toBe(1000);
    expect(backoffMs(10, 500, () => 0.5)).toBe(8000);
    expect(backoffMs(0, 500, () => 0)).toBe(375);
    expect(backoffMs(0, 500, () => 0.999999)).toBe(625);
  });
});
