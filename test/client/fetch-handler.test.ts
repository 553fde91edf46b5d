import { describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  IN_PROCESS_BASE_URL,
  MemoryClient,
  NotFoundError,
} from "../../src/client/index.js";
import { VERSION } from "../../src/version.js";

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

describe("in-process fetch handler transport", () => {
  it("hands the handler the full Request: method, URL, auth, User-Agent and JSON body", async () => {
    const seen: Request[] = [];
    const bodies: unknown[] = [];
    const client = new MemoryClient({
      apiKey: "mk_local",
      fetch: async (req) => {
        seen.push(req);
        bodies.push(await req.json());
        return json({ id: "doc-1", status: "queued" });
      },
    });
    const res = await client
      .ns("alice")
      .documents.add({ content: "hello", id: "doc-1", dreaming: "instant" });
    expect(res).toEqual({ id: "doc-1", status: "queued" });
    const req = seen[0]!;
    expect(req).toBeInstanceOf(Request);
    expect(req.method).toBe("POST");
    expect(req.url).toBe(`${IN_PROCESS_BASE_URL}/ns/alice/document?dreaming=instant`);
    expect(req.headers.get("authorization")).toBe("Bearer mk_local");
    expect(req.headers.get("user-agent")).toBe(`memctx/${VERSION}`);
    expect(req.headers.get("content-type")).toBe("application/json");
    expect(bodies[0]).toEqual({ content: "hello", id: "doc-1" });
    await client.close();
  });

  it("uses the given baseUrl with a handler", async () => {
    let url = "";
    const client = new MemoryClient({
      baseUrl: "http://engine.test/api",
      apiKey: "k",
      fetch: async (req) => {
        url = req.url;
        return json({ organizationalContext: null, namespaceCount: 1 });
      },
    });
    await client.organization.get();
    expect(url).toBe("http://engine.test/api/organization");
  });

  it("maps the handler's error responses and retries like HTTP", async () => {
    let calls = 0;
    const client = new MemoryClient({
      apiKey: "k",
      retryBaseMs: 1,
      fetch: async () => {
        calls++;
        return calls === 1
          ? json({ error: "slow down" }, 429, { "retry-after": "0" })
          : json({ error: "document not found" }, 404);
      },
    });
    const err = await client
      .ns("alice")
      .documents.get("nope")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).body).toEqual({ error: "document not found" });
    expect(calls).toBe(2);
  });

  it("turns a handler that throws into APIConnectionError", async () => {
    const client = new MemoryClient({
      apiKey: "k",
      maxRetries: 0,
      fetch: async () => {
        throw new Error("engine closed");
      },
    });
    const err = await client.organization.get().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect((err as Error).message).toMatch(/engine closed/);
  });

  it("ends a call whose handler ignores the signal: timeout and abort", async () => {
    const never = () => new Promise<Response>(() => {});
    const client = new MemoryClient({ apiKey: "k", maxRetries: 0, fetch: never });
    await expect(client.organization.get({ timeoutMs: 50 })).rejects.toBeInstanceOf(APITimeoutError);
    const ac = new AbortController();
    const p = client.organization.get({ signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(APIUserAbortError);
  });
});
