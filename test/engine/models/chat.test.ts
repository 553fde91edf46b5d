import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  chatModelFromEnv,
  ModelOutputError,
  OpenAICompatibleChatModel,
} from "../../../src/engine/models/chat.js";
import { ModelRequestError } from "../../../src/engine/models/openai-http.js";
import { chatReply, errorReply, type FakeModelServer, startFakeModelServer } from "./openai-server.js";

let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.queue.length = 0;
});

const Facts = z.object({
  facts: z.array(z.object({ memory: z.string().min(1), eventDate: z.string().nullable() })),
});

function model() {
  return new OpenAICompatibleChatModel({
    baseUrl: server.baseUrl,
    model: "gpt-test",
    apiKey: "sk-chat",
    retryBaseMs: 1,
  });
}

const ask = (m = model()) =>
  m.completeJson({ system: "Extract facts.", user: "Caroline moved to Berlin.", schema: Facts });

const GOOD = JSON.stringify({ facts: [{ memory: "Caroline moved to Berlin", eventDate: null }] });

describe("OpenAICompatibleChatModel.completeJson", () => {
  it("asks for strict json_schema output built from the zod schema and answers the parsed value", async () => {
    server.queue.push(() => chatReply(GOOD));
    const value = await ask();
    expect(value).toEqual({ facts: [{ memory: "Caroline moved to Berlin", eventDate: null }] });
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req!.path).toBe("/v1/chat/completions");
    expect(req!.headers.authorization).toBe("Bearer sk-chat");
    expect(req!.body.model).toBe("gpt-test");
    expect(req!.body.messages).toEqual([
      { role: "system", content: "Extract facts." },
      { role: "user", content: "Caroline moved to Berlin." },
    ]);
    const format = req!.body.response_format as {
      type: string;
      json_schema: { name: string; strict: boolean; schema: Record<string, unknown> };
    };
    expect(format.type).toBe("json_schema");
    expect(format.json_schema.name).toBe("response");
    expect(format.json_schema.strict).toBe(true);
    expect(format.json_schema.schema).toMatchObject({
      type: "object",
      required: ["facts"],
      additionalProperties: false,
      properties: { facts: { type: "array" } },
    });
    expect(format.json_schema.schema).not.toHaveProperty("$schema");
  });

  it("falls back to json_object, with the schema in the prompt, when the server answers 400 to json_schema", async () => {
    server.queue.push(
      () => errorReply(400, "response_format json_schema is not supported"),
      () => chatReply(GOOD),
      () => chatReply(GOOD),
    );
    const m = model();
    expect(await ask(m)).toEqual(JSON.parse(GOOD));
    expect(server.requests.map((r) => (r.body.response_format as { type: string }).type)).toEqual([
      "json_schema",
      "json_object",
    ]);
    const system = (server.requests[1]!.body.messages as { content: string }[])[0]!.content;
    expect(system).toContain("Extract facts.");
    expect(system).toContain("JSON Schema");
    expect(system).toContain('"eventDate"');
    // The same schema goes straight to json_object from then on.
    await ask(m);
    expect((server.requests[2]!.body.response_format as { type: string }).type).toBe("json_object");
  });

  it("repairs once: it tells the model what failed validation and accepts the corrected reply", async () => {
    server.queue.push(
      () => chatReply(JSON.stringify({ facts: [{ memory: "" }] })),
      () => chatReply(`\`\`\`json\n${GOOD}\n\`\`\``),
    );
    expect(await ask()).toEqual(JSON.parse(GOOD));
    expect(server.requests).toHaveLength(2);
    const messages = server.requests[1]!.body.messages as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(messages[2]!.content).toBe(JSON.stringify({ facts: [{ memory: "" }] }));
    expect(messages[3]!.content).toContain("facts.0.memory");
    expect(messages[3]!.content).toContain("facts.0.eventDate");
  });

  it("repairs a reply that is not JSON at all", async () => {
    server.queue.push(
      () => chatReply("Sure! Here are the facts: Caroline moved."),
      () => chatReply(GOOD),
    );
    expect(await ask()).toEqual(JSON.parse(GOOD));
    const messages = server.requests[1]!.body.messages as { content: string }[];
    expect(messages[3]!.content).toContain("not JSON");
  });

  it("gives up after one failed repair with an error naming the model and the problem", async () => {
    server.queue.push(
      () => chatReply("{}"),
      () => chatReply("{}"),
    );
    const error = await ask().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelOutputError);
    expect((error as Error).message).toContain("gpt-test");
    expect((error as Error).message).toContain("facts");
    expect(server.requests).toHaveLength(2);
  });

  it("retries a 5xx, and reports a 401 with a hint about the key", async () => {
    server.queue.push(
      () => errorReply(502, "bad gateway"),
      () => chatReply(GOOD),
    );
    expect(await ask()).toEqual(JSON.parse(GOOD));
    server.queue.push(() => errorReply(401, "Incorrect API key provided"));
    const error = await ask().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as Error).message).toContain(
      `chat request to ${server.baseUrl}/chat/completions (model gpt-test)`,
    );
    expect((error as Error).message).toContain("check the API key");
  });

  it("reports a refusal", async () => {
    server.queue.push(() => ({
      status: 200,
      body: {
        choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "I can't help." } }],
      },
    }));
    await expect(ask()).rejects.toThrow("refused: I can't help.");
  });
});

describe("chatModelFromEnv", () => {
  it("is null when nothing is configured, and names the missing variable when half-configured", () => {
    expect(chatModelFromEnv({})).toBeNull();
    expect(() => chatModelFromEnv({ MEMCTX_LLM_URL: server.baseUrl })).toThrow("MEMCTX_LLM_MODEL");
    expect(() => chatModelFromEnv({ MEMCTX_LLM_MODEL: "m" })).toThrow("MEMCTX_LLM_URL");
  });

  it("builds a chat model from MEMCTX_LLM_* that reaches the configured server", async () => {
    const m = chatModelFromEnv({
      MEMCTX_LLM_URL: server.origin,
      MEMCTX_LLM_MODEL: "llama3",
      MEMCTX_LLM_API_KEY: "k",
    });
    expect(m?.model).toBe("llama3");
    server.queue.push(() => chatReply(GOOD));
    await m!.completeJson({ system: "s", user: "u", schema: Facts });
    expect(server.requests[0]!.path).toBe("/v1/chat/completions");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer k");
  });
});
