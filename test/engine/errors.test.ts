import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorHandler } from "../../src/engine/app.js";
import {
  ConfigurationError,
  ConflictError,
  type DomainError,
  ForbiddenError,
  InputError,
  NotFoundError,
  StorageFullError,
  TooLargeError,
  UnauthenticatedError,
} from "../../src/engine/errors.js";
import { type Engine, openEngine } from "../../src/engine/index.js";
import type { EngineEnv } from "../../src/engine/routes/route.js";
import { createKey } from "../../src/engine/store/organizations.js";
import { TEST_BACKEND } from "../support/harness.js";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = any;
let dir: string;
let engine: Engine;
let logged: string[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "memctx-errors-"));
  logged = [];
  engine = await openEngine({
    dataDir: dir,
    workers: 0,
    embedder: null,
    log: (line) => logged.push(line),
  });
});

afterEach(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An app whose one route throws `error`, answered by the engine's one error handler. */
async function answerTo(error: Error): Promise<{ status: number; json: Json }> {
  const app = new Hono<EngineEnv>();
  app.onError(errorHandler(engine.context));
  app.get("/boom", () => {
    throw error;
  });
  const res = await app.fetch(new Request("http://memctx.local/boom"));
  return { status: res.status, json: await res.json() };
}

describe("domain errors meet HTTP in one place", () => {
  const cases: [DomainError, number, Json][] = [
    [
      new InputError("config.startUrl", "must be an absolute http(s) URL"),
      400,
      { error: "Invalid request", details: "config.startUrl: must be an absolute http(s) URL" },
    ],
    [
      new ConfigurationError("MEMCTX_NOTION_CLIENT_ID", "provider notion needs an OAuth app"),
      400,
      {
        error: "Server setting missing",
        details: "provider notion needs an OAuth app; the engine's operator must set MEMCTX_NOTION_CLIENT_ID",
      },
    ],
    [
      new UnauthenticatedError("Missing API key", "send it"),
      401,
      { error: "Missing API key", details: "send it" },
    ],
    [
      new ForbiddenError("Namespace not allowed", "no"),
      403,
      { error: "Namespace not allowed", details: "no" },
    ],
    [new NotFoundError("Document"), 404, { error: "Document not found" }],
    [
      new ConflictError("A sync is already running", "wait"),
      409,
      { error: "A sync is already running", details: "wait" },
    ],
    [
      new TooLargeError("Request body too large", "at most 1 byte"),
      413,
      { error: "Request body too large", details: "at most 1 byte" },
    ],
    [new StorageFullError(), 507, { error: "Disk full", details: expect.stringContaining("free space") }],
  ];
  for (const [error, status, body] of cases) {
    it(`answers a ${error.name} with ${status} and its title and details`, async () => {
      const answer = await answerTo(error);
      expect(answer.status).toBe(status);
      expect(answer.json).toEqual(body);
    });
  }

  it("answers SQLite's disk-full error as a 507 and logs it", async () => {
    const full = Object.assign(new Error("database or disk is full"), { errcode: 13 });
    const answer = await answerTo(full);
    expect(answer.status).toBe(507);
    expect(answer.json.error).toBe("Disk full");
    expect(logged.join("\n")).toContain("disk full on GET /boom");
  });

  it("answers anything else as a bug: 500 without its message, the stack in the log", async () => {
    const answer = await answerTo(new TypeError("secret internals"));
    expect(answer).toEqual({ status: 500, json: { error: "Internal server error" } });
    expect(logged.join("\n")).toContain("secret internals");
  });
});

describe("the route helper's namespace", () => {
  let key: string;
  const call = async (method: string, path: string, body?: unknown, bearer = key) => {
    const res = await engine.fetch(
      new Request(`http://memctx.local${path}`, {
        method,
        headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    );
    return { status: res.status, json: (await res.json()) as Json };
  };
  beforeEach(async () => {
    key = await engine.createKey();
  });

  it("is only found by reads: searching, listing and reading an unknown namespace create nothing", async () => {
    expect((await call("POST", "/ns/ghost/search", { query: "anything" })).status).toBe(200);
    expect((await call("GET", "/ns/ghost/connectors")).json).toEqual({ connectors: [] });
    expect((await call("GET", "/ns/ghost/document/doc_x")).status).toBe(404);
    expect((await call("GET", "/ns/ghost")).status).toBe(404);
  });

  it("is created by a write, in one transaction with it: a refused connector leaves no namespace", async () => {
    const refused = await call("POST", "/ns/fresh/connectors", { provider: "web-crawler", config: {} });
    expect(refused.status).toBe(400);
    expect(refused.json.details).toContain("config.startUrl");
    expect((await call("GET", "/ns/fresh")).status).toBe(404);
    const added = await call("POST", "/ns/fresh/document", { content: "hello there" });
    expect(added.status).toBe(200);
    expect((await call("GET", "/ns/fresh")).json.namespace).toBe("fresh");
  });

  it("names the operator's settings when an OAuth provider has no app configured", async () => {
    const saved = process.env.MEMCTX_NOTION_CLIENT_ID;
    delete process.env.MEMCTX_NOTION_CLIENT_ID;
    try {
      const res = await call("POST", "/ns/team/connectors", {
        provider: "notion",
        redirectUrl: "http://127.0.0.1/cb",
      });
      expect(res.status).toBe(400);
      expect(res.json.error).toBe("Server setting missing");
      expect(res.json.details).toContain("operator must set MEMCTX_NOTION_CLIENT_ID");
      expect((await call("GET", "/ns/team")).status).toBe(404);
    } finally {
      if (saved !== undefined) process.env.MEMCTX_NOTION_CLIENT_ID = saved;
    }
  });

  it("is checked against the key's allow-list before any look-up (403), reads and writes alike", async () => {
    const restricted = await createKey(engine.context.db, "local", ["mine"]);
    for (const [method, path, body] of [
      ["POST", "/ns/theirs/search", { query: "x" }],
      ["GET", "/ns/theirs/connectors", undefined],
      ["POST", "/ns/theirs/document", { content: "x" }],
    ] as const) {
      const res = await call(method, path, body, restricted);
      expect(res.status).toBe(403);
      expect(res.json.error).toBe("Namespace not allowed");
    }
    expect((await call("GET", "/ns/theirs")).status).toBe(404);
  });
});

// SQLite's file lock; PostgreSQL's lock waits are tested in store/namespace-lock.test.ts.
describe.skipIf(TEST_BACKEND === "postgres")("a database locked past the busy timeout", () => {
  it("answers 503 with Retry-After, not a 500, and writes nothing", async () => {
    const key = await engine.createKey();
    // Another process's connection holds the write lock (a long commit, say).
    const other = new DatabaseSync(join(dir, "memctx.db"));
    other.exec("BEGIN IMMEDIATE");
    try {
      const res = await engine.fetch(
        new Request("http://memctx.local/ns/locked/document", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ content: "Waits for the lock, then gives up." }),
        }),
      );
      expect(res.status).toBe(503);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(((await res.json()) as Json).details ?? "").toMatch(/locked by another writer.*try again/);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(
      (
        await engine.fetch(
          new Request("http://memctx.local/ns/locked", { headers: { authorization: `Bearer ${key}` } }),
        )
      ).status,
    ).toBe(404);
  });
});
