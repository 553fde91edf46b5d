import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { embedderFromEnv } from "../../../src/engine/models/embedder-from-env.js";
import { OpenAICompatibleEmbedder } from "../../../src/engine/models/openai-compatible.js";
import { endpointUrl, ModelRequestError } from "../../../src/engine/models/openai-http.js";
import { WordVectorEmbedder } from "../../../src/engine/models/word-vectors.js";
import {
  embeddingsReply,
  errorReply,
  type FakeModelServer,
  fakeVector,
  startFakeModelServer,
} from "./openai-server.js";

let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.queue.length = 0;
});

const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
function unit(v: number[]): number[] {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

function embedder(extra: Partial<ConstructorParameters<typeof OpenAICompatibleEmbedder>[0]> = {}) {
  return new OpenAICompatibleEmbedder({
    baseUrl: server.baseUrl,
    model: "nomic-embed-text",
    apiKey: "sk-test",
    retryBaseMs: 1,
    ...extra,
  });
}

describe("OpenAICompatibleEmbedder", () => {
  it("sends the OpenAI embeddings request and answers one unit vector per text", async () => {
    const e = embedder();
    const vectors = await e.embed(["hello", "green tea"]);
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req!.method).toBe("POST");
    expect(req!.path).toBe("/v1/embeddings");
    expect(req!.headers.authorization).toBe("Bearer sk-test");
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(req!.body).toEqual({ model: "nomic-embed-text", input: ["hello", "green tea"] });
    expect(vectors).toHaveLength(2);
    for (const v of vectors) expect(norm(v)).toBeCloseTo(1, 5);
    expect([...vectors[1]!].map((x) => Number(x.toFixed(5)))).toEqual(
      unit(fakeVector("green tea")).map((x) => Number(x.toFixed(5))),
    );
  });

  it("learns the dimensions from the first answer", async () => {
    const e = embedder();
    expect(e.dimensions).toBe(0);
    await e.embed(["x"]);
    expect(e.dimensions).toBe(4);
  });

  it("batches inputs, 64 per request by default, and keeps the order", async () => {
    const texts = Array.from({ length: 150 }, (_, i) => `text number ${i}`);
    const vectors = await embedder().embed(texts);
    expect(server.requests.map((r) => (r.body.input as string[]).length)).toEqual([64, 64, 22]);
    expect(vectors).toHaveLength(150);
    vectors.forEach((v, i) => {
      expect(v[0]).toBeCloseTo(unit(fakeVector(texts[i]!))[0]!, 5);
    });
  });

  it("puts vectors back in input order when the server answers out of order", async () => {
    server.queue.push((req) => embeddingsReply(req, "reverse"));
    const vectors = await embedder().embed(["a", "bbbbbbbb"]);
    expect(vectors[0]![1]).toBeCloseTo(unit(fakeVector("a"))[1]!, 5);
    expect(vectors[1]![1]).toBeCloseTo(unit(fakeVector("bbbbbbbb"))[1]!, 5);
  });

  it("accepts base64-encoded vectors", async () => {
    server.queue.push(() => ({
      status: 200,
      body: {
        data: [{ index: 0, embedding: Buffer.from(new Float32Array([3, 4]).buffer).toString("base64") }],
        model: "m",
      },
    }));
    const [v] = await embedder().embed(["x"]);
    expect([...v!]).toEqual([expect.closeTo(0.6, 5), expect.closeTo(0.8, 5)]);
  });

  it("sends and enforces configured dimensions", async () => {
    const e = embedder({ dimensions: 8 });
    expect(e.dimensions).toBe(8);
    const error = await e.embed(["x"]).catch((err: unknown) => err);
    expect(server.requests[0]!.body.dimensions).toBe(8);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as Error).message).toContain("vector of 4 dimensions; 8 were expected");
  });

  it("retries a 429 and a 5xx twice, then succeeds", async () => {
    server.queue.push(
      () => ({ ...errorReply(429, "slow down"), headers: { "retry-after": "0" } }),
      () => errorReply(503, "loading model"),
    );
    const vectors = await embedder().embed(["x"]);
    expect(vectors).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
  });

  it("gives up after two retries with an error naming the URL, the model and the status", async () => {
    server.queue.push(
      () => errorReply(500, "boom"),
      () => errorReply(500, "boom"),
      () => errorReply(500, "boom"),
    );
    const error = await embedder()
      .embed(["x"])
      .catch((err: unknown) => err);
    expect(server.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as Error).message).toContain(`${server.baseUrl}/embeddings (model nomic-embed-text)`);
    expect((error as Error).message).toContain("HTTP 500 after 3 attempts: boom");
  });

  it("does not retry a 4xx and says what to check", async () => {
    server.queue.push(() => errorReply(404, 'model "nope" not found, try pulling it first'));
    const error = await embedder({ model: "nope" })
      .embed(["x"])
      .catch((err: unknown) => err);
    expect(server.requests).toHaveLength(1);
    expect((error as ModelRequestError).status).toBe(404);
    expect((error as Error).message).toContain("check the URL and the model name");
    expect((error as Error).message).toContain('model "nope" not found');
  });

  it("rejects an answer with the wrong number of vectors", async () => {
    server.queue.push(() => ({ status: 200, body: { data: [], model: "m" } }));
    await expect(embedder().embed(["x"])).rejects.toThrow("answered 0 embeddings for 1 inputs");
  });

  it("times out a server that does not answer", async () => {
    const silent = await import("node:http").then(({ createServer }) => createServer(() => {}));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    try {
      const e = new OpenAICompatibleEmbedder({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        model: "m",
        timeoutMs: 200,
        retries: 0,
      });
      await expect(e.embed(["x"])).rejects.toThrow("timed out after 200 ms");
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it("answers nothing for no texts, without a request", async () => {
    expect(await embedder().embed([])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });
});

describe("endpointUrl", () => {
  it("appends the endpoint to the base URL, as the OpenAI SDK's baseURL does", () => {
    expect(endpointUrl("https://api.openai.com/v1", "/embeddings")).toBe(
      "https://api.openai.com/v1/embeddings",
    );
    expect(endpointUrl("http://localhost:11434/v1/", "/embeddings")).toBe(
      "http://localhost:11434/v1/embeddings",
    );
    expect(endpointUrl("http://localhost:1234/api/v1", "/chat/completions")).toBe(
      "http://localhost:1234/api/v1/chat/completions",
    );
  });

  it("adds /v1 to a bare origin and keeps a full endpoint URL as it is", () => {
    expect(endpointUrl("http://localhost:11434", "/embeddings")).toBe("http://localhost:11434/v1/embeddings");
    expect(endpointUrl("http://localhost:8000/v1/embeddings", "/embeddings")).toBe(
      "http://localhost:8000/v1/embeddings",
    );
  });

  it("refuses a URL that is not http(s)", () => {
    expect(() => endpointUrl("localhost:11434", "/embeddings")).toThrow(ModelRequestError);
    expect(() => endpointUrl("nonsense", "/embeddings")).toThrow("not a valid model server URL");
  });
});

describe("embedderFromEnv", () => {
  it("is the built-in word vectors when nothing is configured, and none with MEMCTX_EMBEDDINGS=none", () => {
    const e = embedderFromEnv({});
    expect(e).toBeInstanceOf(WordVectorEmbedder);
    expect(e?.units).toBe("memories");
    expect(embedderFromEnv({ MEMCTX_EMBEDDINGS: "none" })).toBeNull();
    expect(embedderFromEnv({ MEMCTX_EMBEDDINGS: "word-vectors" })).toBeInstanceOf(WordVectorEmbedder);
    expect(() => embedderFromEnv({ MEMCTX_EMBEDDINGS: "glove" })).toThrow(
      "MEMCTX_EMBEDDINGS must be word-vectors or none",
    );
  });

  it("builds an embedder from MEMCTX_EMBEDDINGS_* that reaches the configured server", async () => {
    const e = embedderFromEnv({
      MEMCTX_EMBEDDINGS_URL: server.baseUrl,
      MEMCTX_EMBEDDINGS_MODEL: "text-embedding-3-small",
      MEMCTX_EMBEDDINGS_API_KEY: "sk-env",
    });
    expect(e?.model).toBe("text-embedding-3-small");
    expect(e?.dimensions).toBe(1536);
    server.queue.push((req) => embeddingsReply(req));
    await e?.embed(["x"]).catch(() => {});
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-env");
  });

  it("reads MEMCTX_EMBEDDINGS_DIMENSIONS", () => {
    const e = embedderFromEnv({
      MEMCTX_EMBEDDINGS_URL: server.baseUrl,
      MEMCTX_EMBEDDINGS_MODEL: "m",
      MEMCTX_EMBEDDINGS_DIMENSIONS: "256",
    });
    expect(e?.dimensions).toBe(256);
  });

  it("names the missing or bad variable in a half-configured environment", () => {
    expect(() => embedderFromEnv({ MEMCTX_EMBEDDINGS_URL: server.baseUrl })).toThrow(
      "MEMCTX_EMBEDDINGS_MODEL",
    );
    expect(() => embedderFromEnv({ MEMCTX_EMBEDDINGS_MODEL: "m" })).toThrow("MEMCTX_EMBEDDINGS_URL");
    expect(() =>
      embedderFromEnv({
        MEMCTX_EMBEDDINGS_URL: server.baseUrl,
        MEMCTX_EMBEDDINGS_MODEL: "m",
        MEMCTX_EMBEDDINGS_DIMENSIONS: "x",
      }),
    ).toThrow("MEMCTX_EMBEDDINGS_DIMENSIONS");
  });
});
