import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPublicAddress } from "../../../src/engine/ingest/address.js";
import {
  allowPrivateNetworkFromEnv,
  FetchFailedError,
  FetchRefusedError,
  safeFetch,
} from "../../../src/engine/ingest/fetch.js";
import { type HttpServer, startHttpServer } from "../../support/http-server.js";

let server: HttpServer;
const text = (body: Uint8Array) => new TextDecoder().decode(body);

beforeAll(async () => {
  server = await startHttpServer((req, res, body) => {
    const url = new URL(req.url ?? "/", "http://x");
    switch (url.pathname) {
      case "/hello":
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        res.end(
          `hello ${req.headers.host} auth=${req.headers.authorization ?? "none"} amz=${req.headers["x-amz-security-token"] ?? "none"} accept=${req.headers.accept ?? "none"}`,
        );
        return;
      case "/echo":
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(`${req.method} ${body}`);
        return;
      case "/see-other":
        res.writeHead(303, { location: "/echo" });
        res.end();
        return;
      case "/redirect":
        res.writeHead(302, { location: url.searchParams.get("to") ?? "/hello" });
        res.end();
        return;
      case "/loop":
        res.writeHead(301, { location: "/loop" });
        res.end();
        return;
      case "/missing":
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("no such page");
        return;
      case "/big": {
        // Streams without a Content-Length, so only counting the bytes can stop it.
        res.writeHead(200, { "content-type": "application/octet-stream" });
        const block = Buffer.alloc(64 * 1024, 97);
        let sent = 0;
        const pump = () => {
          while (sent < 60 * 1024 * 1024) {
            sent += block.length;
            if (!res.write(block)) return void res.once("drain", pump);
          }
          res.end();
        };
        res.on("close", () => {
          sent = Number.POSITIVE_INFINITY;
        });
        pump();
        return;
      }
      case "/declared-big":
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(10_000) });
        res.end("x".repeat(10_000));
        return;
      case "/slow":
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("first bytes...");
        // Never ends on its own; the client's total timeout must.
        return;
      default:
        res.writeHead(500);
        res.end();
    }
  });
});
afterAll(() => server.close());

describe("safeFetch refuses private targets by default", () => {
  const port = () => server.port;
  it.each([
    ["127.0.0.1", () => `http://127.0.0.1:${port()}/hello`],
    ["localhost", () => `http://localhost:${port()}/hello`],
    ["[::1]", () => `http://[::1]:${port()}/hello`],
    ["169.254.169.254 (cloud metadata)", () => `http://169.254.169.254:${port()}/hello`],
    ["10.0.0.1", () => `http://10.0.0.1:${port()}/hello`],
    ["192.168.1.1", () => `http://192.168.1.1:${port()}/hello`],
    ["[::ffff:127.0.0.1]", () => `http://[::ffff:127.0.0.1]:${port()}/hello`],
    ["2130706433 (127.0.0.1 as a number)", () => `http://2130706433:${port()}/hello`],
  ])("refuses %s without sending a request, and says how to allow it", async (_name, url) => {
    const before = server.requests.length;
    const error = await safeFetch(url(), { allowPrivateNetwork: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchRefusedError);
    expect((error as Error).message).toMatch(/refused because .* (loopback|private|link-local)/);
    expect((error as Error).message).toContain("MEMCTX_ALLOW_PRIVATE_NETWORK=1");
    expect(server.requests.length).toBe(before);
  });

  it("fetches a loopback URL when private networks are allowed", async () => {
    const fetched = await safeFetch(`${server.url}/hello`, { allowPrivateNetwork: true });
    expect(fetched.status).toBe(200);
    expect(fetched.contentType).toBe("text/plain; charset=utf-8");
    expect(text(fetched.body)).toContain(`hello 127.0.0.1:${server.port}`);
    expect(fetched.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  });

  it("refuses schemes other than http and https", async () => {
    for (const url of ["file:///etc/passwd", "ftp://example.com/x", "data:text/plain,hi", "not a url"]) {
      await expect(safeFetch(url, { allowPrivateNetwork: true })).rejects.toBeInstanceOf(FetchRefusedError);
    }
  });
});

describe("safeFetch pins the connection to the checked address", () => {
  it("connects to the address the resolver gave, keeping the host name in the request", async () => {
    let lookups = 0;
    const fetched = await safeFetch(`http://app.example:${server.port}/hello`, {
      allowPrivateNetwork: true,
      resolveHost: async () => {
        lookups++;
        return [{ address: "127.0.0.1", family: 4 }];
      },
    });
    // app.example does not exist in DNS: the request reached the server only through the pinned address.
    expect(text(fetched.body)).toContain(`hello app.example:${server.port}`);
    expect(lookups).toBe(1);
  });

  it("refuses a host when any of its addresses is private", async () => {
    const error = await safeFetch(`http://mixed.example:${server.port}/hello`, {
      allowPrivateNetwork: false,
      resolveHost: async () => [
        { address: "93.184.215.14", family: 4 },
        { address: "10.1.2.3", family: 4 },
      ],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchRefusedError);
    expect((error as Error).message).toContain("mixed.example resolves to 10.1.2.3, a private address");
  });
});

describe("safeFetch redirects", () => {
  // The policy lets only this test server's address through, like a public host would be.
  const onlyTheServer = (address: string) => address === "127.0.0.1" || isPublicAddress(address);

  it("follows a redirect and reports the final URL", async () => {
    const fetched = await safeFetch(`${server.url}/redirect?to=/hello`, { allowPrivateNetwork: true });
    expect(fetched.url).toBe(`${server.url}/hello`);
    expect(text(fetched.body)).toContain("hello");
  });

  it("refuses a redirect from an allowed host to a private one, before connecting to it", async () => {
    const target = "http://internal.example/admin";
    const error = await safeFetch(`${server.url}/redirect?to=${encodeURIComponent(target)}`, {
      allowPrivateNetwork: false,
      isAllowedAddress: onlyTheServer,
      resolveHost: async (host) => [
        { address: host === "internal.example" ? "10.0.0.5" : "127.0.0.1", family: 4 },
      ],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchRefusedError);
    expect((error as Error).message).toContain("http://internal.example/admin");
    expect((error as Error).message).toContain("10.0.0.5");
  });

  it("refuses a redirect to a private IP literal and to another scheme", async () => {
    for (const to of ["http://169.254.169.254/latest/meta-data/", "file:///etc/passwd"]) {
      const error = await safeFetch(`${server.url}/redirect?to=${encodeURIComponent(to)}`, {
        allowPrivateNetwork: false,
        isAllowedAddress: onlyTheServer,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FetchRefusedError);
    }
  });

  it("drops credential headers (Authorization, x-amz-*) when a redirect leaves the origin", async () => {
    const headers = { Authorization: "Bearer secret", "X-Amz-Security-Token": "tok", Accept: "text/html" };
    const sameOrigin = await safeFetch(`${server.url}/redirect?to=/hello`, {
      allowPrivateNetwork: true,
      headers,
    });
    expect(text(sameOrigin.body)).toContain("auth=Bearer secret amz=tok");
    const otherOrigin = await safeFetch(
      `${server.url}/redirect?to=${encodeURIComponent(`http://localhost:${server.port}/hello`)}`,
      { allowPrivateNetwork: true, headers },
    );
    // Credentials stay behind; ordinary headers travel on.
    expect(text(otherOrigin.body)).toContain("auth=none amz=none accept=text/html");
  });

  it("sends a POST body, and continues a 303 as a GET without it", async () => {
    const posted = await safeFetch(`${server.url}/echo`, {
      allowPrivateNetwork: true,
      method: "POST",
      body: '{"query":"x"}',
      headers: { "content-type": "application/json" },
    });
    expect(text(posted.body)).toBe('POST {"query":"x"}');
    const redirected = await safeFetch(`${server.url}/see-other`, {
      allowPrivateNetwork: true,
      method: "POST",
      body: "data",
    });
    expect(text(redirected.body)).toBe("GET ");
  });

  it("stops after 5 redirects", async () => {
    const error = await safeFetch(`${server.url}/loop`, { allowPrivateNetwork: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FetchRefusedError);
    expect((error as Error).message).toContain("more than 5 redirects");
  });
});

describe("safeFetch limits", () => {
  it("cuts off a body that streams past maxBytes", async () => {
    const error = await safeFetch(`${server.url}/big`, {
      allowPrivateNetwork: true,
      maxBytes: 1024 * 1024,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchRefusedError);
    expect((error as Error).message).toContain("larger than the limit of 1048576 bytes");
  });

  it("cuts off a 60 MB stream at the default 50 MB limit", async () => {
    const error = await safeFetch(`${server.url}/big`, { allowPrivateNetwork: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FetchRefusedError);
    expect((error as Error).message).toContain(`larger than the limit of ${50 * 1024 * 1024} bytes`);
  });

  it("refuses a declared Content-Length above maxBytes", async () => {
    const error = await safeFetch(`${server.url}/declared-big`, {
      allowPrivateNetwork: true,
      maxBytes: 1000,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchRefusedError);
  });

  it("gives up after the total timeout", async () => {
    const error = await safeFetch(`${server.url}/slow`, {
      allowPrivateNetwork: true,
      timeoutMs: 300,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchRefusedError);
    expect((error as Error).message).toContain("took longer than 300 ms");
  });

  it("reports an HTTP error status with the status in the message", async () => {
    const error = await safeFetch(`${server.url}/missing`, { allowPrivateNetwork: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FetchFailedError);
    expect((error as FetchFailedError).status).toBe(404);
    expect((error as Error).message).toContain("HTTP 404");
  });

  it("reports a connection failure as FetchFailedError", async () => {
    const closed = await startHttpServer(() => {});
    const url = `${closed.url}/x`;
    await closed.close();
    await expect(safeFetch(url, { allowPrivateNetwork: true })).rejects.toBeInstanceOf(FetchFailedError);
  });

  it("passes the caller's abort through", async () => {
    const controller = new AbortController();
    const pending = safeFetch(`${server.url}/slow`, {
      allowPrivateNetwork: true,
      signal: controller.signal,
    });
    controller.abort(new Error("stopped by caller"));
    await expect(pending).rejects.toThrow("stopped by caller");
  });
});

describe("allowPrivateNetworkFromEnv", () => {
  it("reads MEMCTX_ALLOW_PRIVATE_NETWORK=1", () => {
    expect(allowPrivateNetworkFromEnv({ MEMCTX_ALLOW_PRIVATE_NETWORK: "1" })).toBe(true);
    expect(allowPrivateNetworkFromEnv({ MEMCTX_ALLOW_PRIVATE_NETWORK: "0" })).toBe(false);
    expect(allowPrivateNetworkFromEnv({})).toBe(false);
  });
});
