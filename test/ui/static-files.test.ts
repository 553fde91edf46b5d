import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { endpoints, fillPath } from "../../src/api/endpoints.js";
import { UI_CONTENT_SECURITY_POLICY } from "../../src/ui/static-files.js";
import { ROOT, startTestServer, type TestServer, tempDir } from "../support/harness.js";

const STATIC = join(ROOT, "src/ui/static");
let dir: ReturnType<typeof tempDir>;
let server: TestServer;
beforeEach(async () => {
  dir = tempDir();
  server = await startTestServer(dir.path, { workers: 0 });
});
afterEach(async () => {
  await server.close();
  dir.remove();
});

describe("the memory browser's static files at /ui", () => {
  it("serves the page and its files without a key, each with a strict Content-Security-Policy", async () => {
    for (const [path, type] of [
      ["/ui", "text/html"],
      ["/ui/", "text/html"],
      ["/ui/app.js", "text/javascript"],
      ["/ui/api.js", "text/javascript"],
      ["/ui/dom.js", "text/javascript"],
      ["/ui/style.css", "text/css"],
    ] as const) {
      const res = await server.call("GET", path, { key: null });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toContain(type);
      const csp = res.headers.get("content-security-policy");
      expect(csp, path).toBe(UI_CONTENT_SECURITY_POLICY);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).not.toContain("unsafe-eval");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      await res.arrayBuffer();
    }
  });

  it("reads no other file from disk and leaves the API behind its key", async () => {
    for (const path of ["/ui/missing.js", "/ui/..%2f..%2fpackage.json", "/ui/%2e%2e/static-files.ts"]) {
      const res = await server.call("GET", path, { key: null });
      expect([404, 401], path).toContain(res.status);
      expect(await res.text()).not.toContain('"name": "memctx"');
    }
    expect((await server.call("GET", "/namespaces", { key: null })).status).toBe(401);
    // memctx serve has no key to hand out: the exchange is memctx ui's only.
    const exchange = await server.call("POST", "/ui/session", { key: null, body: { token: "x" } });
    expect(exchange.status).toBe(401);
  });

  it("has no inline script, inline style or event-handler attribute that the policy would have to allow", () => {
    const html = readFileSync(join(STATIC, "index.html"), "utf8");
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="\/ui\/[a-z]+\.js"/);
      expect(body!.trim()).toBe("");
    }
    expect(html).not.toMatch(/<style\b/);
    expect(html).not.toMatch(/\sstyle="/);
    expect(html).not.toMatch(/\son[a-z]+="/);
    // No markup is ever made from data: the scripts never parse HTML.
    for (const file of ["app.js", "api.js", "dom.js"]) {
      const js = readFileSync(join(STATIC, file), "utf8");
      expect(js, file).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
      );
    }
  });

  it("calls only endpoints of the v5 contract (and memctx ui's token exchange)", () => {
    const js = readFileSync(join(STATIC, "api.js"), "utf8");
    const calls = [...js.matchAll(/call\("(GET|POST|PATCH|PUT|DELETE)", (ns\(n\)|`[^`]*`|"[^"]*")/g)].map(
      ([, method, path]) => ({
        method: method!,
        path: path!
          .replace(/^ns\(n\)$/, "/ns/alice")
          .replace(/^[`"]|[`"]$/g, "")
          .replace(/\$\{ns\(n\)\}/g, "/ns/alice")
          .replace(/\$\{enc\(id\)\}/g, "mem_1")
          .replace(/\?.*$/, ""),
      }),
    );
    expect(calls.length).toBeGreaterThan(10);
    const known = Object.values(endpoints).map((e) => ({
      method: e.method,
      pattern: new RegExp(
        `^${fillPath(e.path, new Proxy({}, { get: () => "PARAM" })).replace(/PARAM/g, "[^/]+")}$`,
      ),
    }));
    for (const c of calls) {
      if (c.path === "/ui/session") continue;
      expect(
        known.some((k) => k.method === c.method && k.pattern.test(c.path)),
        `${c.method} ${c.path}`,
      ).toBe(true);
    }
  });
});
