import { describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  InvalidResponseError,
  MemoryApiError,
  MemoryClient,
  NotFoundError,
  PayloadTooLargeError,
  PaymentRequiredError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from "../../src/client/index.js";
import { closedPort, scriptedServerPerFile } from "../support/scripted-server.js";
import { until } from "../support/wait.js";

const { server, client } = scriptedServerPerFile({ maxRetries: 0 });

const caught = async (p: Promise<unknown>): Promise<MemoryApiError> => {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(MemoryApiError);
    return err as MemoryApiError;
  }
  throw new Error("expected the call to fail");
};

describe("error mapping", () => {
  for (const [status, Class] of [
    [400, BadRequestError],
    [401, AuthenticationError],
    [402, PaymentRequiredError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [413, PayloadTooLargeError],
    [422, UnprocessableEntityError],
    [429, RateLimitError],
    [500, InternalServerError],
    [503, InternalServerError],
  ] as const) {
    it(`maps ${status} to ${Class.name} with the status and the ErrorResponse body`, async () => {
      const body = { error: `failed with ${status}`, details: "field: rule" };
      server.reply({ status, json: body });
      const err = await caught(client.ns("alice").documents.get("d1"));
      expect(err).toBeInstanceOf(Class);
      expect(err.name).toBe(Class.name);
      expect(err.status).toBe(status);
      expect(err.body).toEqual(body);
      expect(err.message).toBe(`${status} failed with ${status}: field: rule`);
    });
  }

  it("maps another status to the base class with its status", async () => {
    server.reply({ status: 418, json: { error: "teapot" } });
    const err = await caught(client.ns("alice").documents.get("d1"));
    expect(err.constructor).toBe(MemoryApiError);
    expect(err.status).toBe(418);
    expect(err.message).toBe("418 teapot");
  });

  it("still gives a useful message for a non-JSON error body", async () => {
    server.reply({ status: 502, text: "<html><body>Bad gateway from the proxy</body></html>" });
    const err = await caught(client.ns("alice").documents.get("d1"));
    expect(err).toBeInstanceOf(InternalServerError);
    expect(err.status).toBe(502);
    expect(err.body).toBeUndefined();
    expect(err.message).toContain("502");
    expect(err.message).toContain("Bad gateway from the proxy");
  });

  it("reports a 200 whose body breaks the contract as InvalidResponseError naming the field", async () => {
    server.reply({ json: { id: "d1" } });
    const err = await caught(client.ns("alice").documents.add({ content: "x" }));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.message).toMatch(/status/);
  });
});

describe("transport failures", () => {
  it("throws APITimeoutError when the server never answers within timeoutMs", async () => {
    server.reply("hang");
    const err = await caught(client.ns("alice").documents.get("d1", undefined, { timeoutMs: 200 }));
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err.status).toBeUndefined();
    expect(err.message).toMatch(/timed out after 200 ms/);
  });

  it("retries a timed-out idempotent read, then throws APITimeoutError", async () => {
    const c = new MemoryClient({
      baseUrl: server.url,
      apiKey: "k",
      timeoutMs: 200,
      maxRetries: 1,
      retryBaseMs: 1,
    });
    try {
      server.reply("hang", "hang");
      const err = await caught(c.ns("alice").documents.get("d1"));
      expect(err).toBeInstanceOf(APITimeoutError);
      expect(server.received).toHaveLength(2);
    } finally {
      await c.close();
    }
  });

  it("throws APIUserAbortError when the caller aborts, and does not retry", async () => {
    const c = new MemoryClient({ baseUrl: server.url, apiKey: "k", maxRetries: 2, retryBaseMs: 1 });
    try {
      server.reply("hang");
      const ac = new AbortController();
      const p = c.ns("alice").documents.get("d1", undefined, { signal: ac.signal });
      await until(
        () => server.received.length,
        (n) => n > 0,
        "the request to arrive",
      );
      ac.abort();
      const err = await caught(p);
      expect(err).toBeInstanceOf(APIUserAbortError);
      expect(server.received).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it("sends nothing when the signal is already aborted", async () => {
    const err = await caught(
      client.ns("alice").documents.get("d1", undefined, { signal: AbortSignal.abort() }),
    );
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(server.received).toHaveLength(0);
  });

  it("throws APIConnectionError when the connection is refused", async () => {
    const port = await closedPort();
    const c = new MemoryClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "k", maxRetries: 0 });
    try {
      const err = await caught(c.organization.get());
      expect(err).toBeInstanceOf(APIConnectionError);
      expect(err).not.toBeInstanceOf(APITimeoutError);
      expect(err.status).toBeUndefined();
      expect(err.message).toMatch(/ECONNREFUSED/);
    } finally {
      await c.close();
    }
  });

  it("throws APIConnectionError when the server drops the connection", async () => {
    server.reply("destroy");
    const err = await caught(client.ns("alice").documents.get("d1"));
    expect(err).toBeInstanceOf(APIConnectionError);
  });
});
