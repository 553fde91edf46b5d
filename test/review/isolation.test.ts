/**
 * Security review: organization and namespace isolation through the engine's HTTP API, with keys
 * restricted to an allow-list of namespaces (`memctx keys create --namespace NS`).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { createKey, LOCAL_ORGANIZATION } from "../../src/engine/store/organizations.js";
import { TEST_KEY, tempDir } from "../support/harness.js";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = any;

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
/** A key of the local organization allowed only namespace `alice`. */
let aliceKey: string;

beforeEach(async () => {
  dir = tempDir("memctx-review-");
  // No workers: connector syncs stay queued, nothing is fetched.
  engine = await openEngine({
    dataDir: dir.path,
    apiKey: TEST_KEY,
    workers: 0,
    embedder: null,
    log: () => {},
  });
  aliceKey = await createKey(engine.context.db, LOCAL_ORGANIZATION, ["alice"]);
});
afterEach(async () => {
  await engine.close();
  dir.remove();
});

async function call(method: string, path: string, key: string, body?: unknown) {
  const res = await engine.fetch(
    new Request(`http://memctx.local${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
  return { status: res.status, json: (await res.json()) as Json };
}

describe("a key restricted to some namespaces", () => {
  it("sees on GET /connectors only the connectors of namespaces it may use", async () => {
    const secret = await call("POST", "/ns/secret/connectors", TEST_KEY, {
      provider: "web-crawler",
      config: { startUrl: "https://intranet.example.com/private" },
    });
    expect(secret.status).toBe(200);
    const own = await call("POST", "/ns/alice/connectors", TEST_KEY, {
      provider: "web-crawler",
      config: { startUrl: "https://alice.example.com" },
    });
    expect(own.status).toBe(200);

    const all = await call("GET", "/connectors", aliceKey);
    expect(all.status).toBe(200);
    expect(all.json.connectors.map((c: Json) => c.namespace)).toEqual(["alice"]);
    // The unrestricted key still sees every connector of the organization.
    const everything = await call("GET", "/connectors", TEST_KEY);
    expect(everything.json.connectors.map((c: Json) => c.namespace).sort()).toEqual(["alice", "secret"]);
  });

  it("may not change the organization's shared context (403), which guides every namespace", async () => {
    const res = await call("PATCH", "/organization", aliceKey, { organizationalContext: "injected" });
    expect(res.status).toBe(403);
    expect(res.json.error).toBeTruthy();
    const org = await call("GET", "/organization", TEST_KEY);
    expect(org.json.organizationalContext).toBeNull();
    // An unrestricted key may.
    const ok = await call("PATCH", "/organization", TEST_KEY, { organizationalContext: "we build memctx" });
    expect(ok.status).toBe(200);
    expect(ok.json.organizationalContext).toBe("we build memctx");
  });

  it("is refused every /ns route of another namespace, and the refusal creates nothing", async () => {
    const before = await call("GET", "/namespaces", TEST_KEY);
    const attempts: [string, string, unknown?][] = [
      ["POST", "/ns/bob/document", { content: "x" }],
      ["GET", "/ns/bob/document/doc_x"],
      ["DELETE", "/ns/bob/document", { ids: ["doc_x"] }],
      ["POST", "/ns/bob/list/documents", {}],
      ["POST", "/ns/bob/search", { query: "x" }],
      ["GET", "/ns/bob/memories/mem_x"],
      ["DELETE", "/ns/bob/memories", { ids: ["mem_x"] }],
      ["DELETE", "/ns/bob/memories/semantic", { query: "x", dryRun: false }],
      ["POST", "/ns/bob/profile", {}],
      ["GET", "/ns/bob/profile/buckets"],
      ["PUT", "/ns/bob/profile/buckets", { buckets: { work: "work" } }],
      ["DELETE", "/ns/bob/profile/buckets", { buckets: ["work"] }],
      ["GET", "/ns/bob"],
      ["PATCH", "/ns/bob", { supportingContext: "x" }],
      ["DELETE", "/ns/bob"],
      ["DELETE", "/ns/alice?moveTo=bob"],
      ["POST", "/ns/bob/connectors", { provider: "web-crawler", config: { startUrl: "https://e.com" } }],
      ["GET", "/ns/bob/connectors"],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(method, path, aliceKey, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
    }
    const after = await call("GET", "/namespaces", TEST_KEY);
    expect(after.json.namespaces).toEqual(before.json.namespaces);
  });

  it("cannot write a refused namespace through the batch endpoint's containerTag", async () => {
    const res = await call("POST", "/v3/documents/batch", aliceKey, {
      containerTag: "bob",
      documents: [{ content: "one", containerTag: "alice" }, { content: "two" }, "three"],
    });
    expect(res.status).toBe(200);
    expect(res.json.success).toBe(1);
    expect(res.json.failed).toBe(2);
    const names = (await call("GET", "/namespaces", TEST_KEY)).json.namespaces.map((n: Json) => n.namespace);
    expect(names).toEqual(["alice"]);
  });
});

describe("organizations", () => {
  it("never see each other's namespaces, documents or connectors", async () => {
    const otherKey = await engine.createKey("other-org");
    await call("POST", "/ns/shared-name/document", TEST_KEY, { content: "local secret", id: "d1" });
    await call("POST", "/ns/shared-name/connectors", TEST_KEY, {
      provider: "web-crawler",
      config: { startUrl: "https://local.example.com" },
    });
    expect((await call("GET", "/namespaces", otherKey)).json.namespaces).toEqual([]);
    expect((await call("GET", "/connectors", otherKey)).json.connectors).toEqual([]);
    expect((await call("GET", "/ns/shared-name/document/d1", otherKey)).status).toBe(404);
    const del = await call("DELETE", "/ns/shared-name/document", otherKey, { ids: ["d1"] });
    expect(del.json.count).toBe(0);
    expect((await call("GET", "/ns/shared-name", otherKey)).status).toBe(404);
    expect((await call("DELETE", "/ns/shared-name", otherKey)).status).toBe(404);
    expect((await call("GET", "/ns/shared-name/document/d1", TEST_KEY)).status).toBe(200);
    expect((await call("GET", "/organization", otherKey)).json.namespaceCount).toBe(0);
  });
});
