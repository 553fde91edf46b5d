import { z } from "zod";
import { describeIssues } from "../../api/index.js";
import { endpointUrl, httpError, ModelRequestError, postJson, serverMessage } from "./openai-http.js";

/** A chat model that answers with JSON validated against a zod schema. */
export interface ChatModel {
  readonly model: string;
  completeJson<T>(req: {
    system: string;
    user: string;
    schema: z.ZodType<T>;
    signal?: AbortSignal;
  }): Promise<T>;
}

/** The model answered, but not with JSON that fits the schema, even after being told what was wrong. */
export class ModelOutputError extends Error {
  override name = "ModelOutputError";
}

/**
 * A chat model from the environment, or null when MEMCTX_LLM_URL is not set.
 * MEMCTX_LLM_URL: base URL of an OpenAI-compatible server ("/chat/completions" is appended; see
 * endpointUrl). MEMCTX_LLM_MODEL: required with the URL. MEMCTX_LLM_API_KEY: optional bearer key.
 */
export function chatModelFromEnv(env: NodeJS.ProcessEnv = process.env): ChatModel | null {
  const url = env.MEMCTX_LLM_URL?.trim();
  const model = env.MEMCTX_LLM_MODEL?.trim();
  const apiKey = env.MEMCTX_LLM_API_KEY?.trim() || null;
  if (!url) {
    if (model || apiKey) {
      throw new Error(
        "MEMCTX_LLM_URL must be set to use a chat model (for example https://api.openai.com/v1 or http://localhost:11434/v1)",
      );
    }
    return null;
  }
  if (!model) throw new Error("MEMCTX_LLM_MODEL must be set when MEMCTX_LLM_URL is set");
  return new OpenAICompatibleChatModel({ baseUrl: url, model, apiKey });
}

export interface OpenAICompatibleChatModelOptions {
  baseUrl: string;
  model: string;
  apiKey?: string | null;
  /** Left to the server when unset (some reasoning models accept only their default). */
  temperature?: number;
  timeoutMs?: number;
  retries?: number;
  retryBaseMs?: number;
}

type Message = { role: "system" | "user" | "assistant"; content: string };

/**
 * `/chat/completions` with structured output: `response_format: json_schema` (strict) first; a
 * server that answers 400 to that (no structured output, or a schema its strict mode cannot take)
 * gets `json_object` with the schema in the system prompt, for that schema from then on.
 */
export class OpenAICompatibleChatModel implements ChatModel {
  readonly model: string;
  readonly url: string;
  readonly #opts: OpenAICompatibleChatModelOptions;
  readonly #jsonObjectOnly = new WeakSet<z.ZodType>();

  constructor(opts: OpenAICompatibleChatModelOptions) {
    this.model = opts.model;
    this.url = endpointUrl(opts.baseUrl, "/chat/completions");
    this.#opts = opts;
  }

  async completeJson<T>(req: {
    system: string;
    user: string;
    schema: z.ZodType<T>;
    signal?: AbortSignal;
  }): Promise<T> {
    const jsonSchema = toJsonSchema(req.schema);
    const messages: Message[] = [
      { role: "system", content: req.system },
      { role: "user", content: req.user },
    ];
    let reply = await this.#complete(messages, req.schema, jsonSchema, req.signal);
    let result = parseReply(reply, req.schema);
    if (result.ok) return result.value;

    // One repair round: the model sees its own answer and what was wrong with it.
    messages.push(
      { role: "assistant", content: reply },
      {
        role: "user",
        content: `Your reply was not valid: ${result.error}. Reply again with only the corrected JSON object.`,
      },
    );
    reply = await this.#complete(messages, req.schema, jsonSchema, req.signal);
    result = parseReply(reply, req.schema);
    if (result.ok) return result.value;
    throw new ModelOutputError(
      `chat model ${this.model} at ${this.url} did not answer valid JSON after a repair attempt: ${result.error}`,
    );
  }

  async #complete(
    messages: Message[],
    schema: z.ZodType,
    jsonSchema: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<string> {
    if (!this.#jsonObjectOnly.has(schema)) {
      const answer = await this.#post(
        messages,
        { type: "json_schema", json_schema: { name: "response", schema: jsonSchema, strict: true } },
        signal,
      );
      if (answer.status !== 400) return this.#content(answer);
      this.#jsonObjectOnly.add(schema);
    }
    // json_object needs the word JSON in the messages (OpenAI) and the shape spelled out.
    const [system, ...rest] = messages;
    const withSchema: Message[] = [
      {
        role: "system",
        content: `${system!.content}\n\nReply with a single JSON object that matches this JSON Schema:\n${JSON.stringify(jsonSchema)}`,
      },
      ...rest,
    ];
    return this.#content(await this.#post(withSchema, { type: "json_object" }, signal));
  }

  #what(): string {
    return `chat request to ${this.url} (model ${this.model})`;
  }

  #post(messages: Message[], responseFormat: unknown, signal?: AbortSignal) {
    const payload: Record<string, unknown> = {
      model: this.model,
      messages,
      response_format: responseFormat,
    };
    if (this.#opts.temperature !== undefined) payload.temperature = this.#opts.temperature;
    return postJson(this.url, payload, {
      apiKey: this.#opts.apiKey ?? null,
      timeoutMs: this.#opts.timeoutMs ?? 120_000,
      retries: this.#opts.retries ?? 2,
      retryBaseMs: this.#opts.retryBaseMs ?? 500,
      what: this.#what(),
      ...(signal ? { signal } : {}),
    });
  }

  #content({ status, body }: { status: number; body: unknown }): string {
    if (status >= 400) throw httpError(this.#what(), status, body);
    const message = (body as { choices?: { message?: { content?: unknown; refusal?: unknown } }[] } | null)
      ?.choices?.[0]?.message;
    if (typeof message?.refusal === "string" && message.refusal !== "") {
      throw new ModelOutputError(`chat model ${this.model} refused: ${message.refusal}`);
    }
    if (typeof message?.content !== "string") {
      throw new ModelRequestError(`${this.#what()} answered without message content: ${serverMessage(body)}`);
    }
    return message.content;
  }
}

function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function parseReply<T>(reply: string, schema: z.ZodType<T>): Parsed<T> {
  // Some models wrap JSON in a markdown fence even when asked not to.
  const text = reply
    .trim()
    .replace(/^```(?:json)?\s*\n?/i, "")
    .replace(/\n?```$/, "")
    .trim();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `it is not JSON (${(error as Error).message})` };
  }
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: describeIssues("reply", result.error.issues) };
}
