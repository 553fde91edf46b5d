import { describe, expect, it } from "vitest";
import { createUiLaunch, UI_SESSION_PATH } from "../../src/ui/launch.js";

const ORIGIN = "http://127.0.0.1:4321";
const engine = async (req: Request) => new Response(`engine: ${new URL(req.url).pathname}`, { status: 401 });

const exchange = (
  handler: (req: Request) => Promise<Response>,
  body: unknown,
  headers: Record<string, string> = {},
  origin = ORIGIN,
) =>
  handler(
    new Request(`${origin}${UI_SESSION_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", host: new URL(origin).host, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );

describe("memctx ui's one-time token", () => {
  it("opens the page with the token in the fragment, and hands out the key exactly once", async () => {
    const launch = createUiLaunch("mk_secret_key");
    const handler = launch.wrap(engine);
    expect(launch.url(ORIGIN)).toBe(`${ORIGIN}/ui#token=${launch.token}`);
    expect(launch.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const first = await exchange(handler, { token: launch.token }, { origin: ORIGIN });
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(await first.json()).toEqual({ key: "mk_secret_key" });
    expect(launch.used).toBe(true);
    const second = await exchange(handler, { token: launch.token }, { origin: ORIGIN });
    expect(second.status).toBe(403);
    expect(await second.text()).not.toContain("mk_secret_key");
  });

  it("refuses a wrong token, another site's page, a non-loopback host and a malformed body", async () => {
    const launch = createUiLaunch("mk_secret_key");
    const handler = launch.wrap(engine);
    expect((await exchange(handler, { token: "wrong" })).status).toBe(403);
    expect((await exchange(handler, { token: `${launch.token.slice(0, -1)}x` })).status).toBe(403);
    expect(
      (await exchange(handler, { token: launch.token }, { origin: "https://evil.example" })).status,
    ).toBe(403);
    // A DNS-rebound name reaches the socket with its own Host.
    expect((await exchange(handler, { token: launch.token }, {}, "http://rebound.example:4321")).status).toBe(
      403,
    );
    const bad = await exchange(handler, "not json");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ details: expect.stringContaining("body") });
    const empty = await exchange(handler, { token: "" });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ details: expect.stringContaining("token") });
    // None of these used the token up.
    expect(launch.used).toBe(false);
    expect((await exchange(handler, { token: launch.token })).status).toBe(200);
  });

  it("passes every other request to the engine", async () => {
    const handler = createUiLaunch("mk_secret_key").wrap(engine);
    const res = await handler(new Request(`${ORIGIN}/namespaces`));
    expect(await res.text()).toBe("engine: /namespaces");
    const get = await handler(new Request(`${ORIGIN}${UI_SESSION_PATH}`));
    expect(get.status).toBe(405);
  });
});
