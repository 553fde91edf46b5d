import type { IncomingMessage } from "node:http";
import { json, startHttpServer } from "../../support/http-server.js";

/**
 * A local stand-in for an OpenAI-compatible model server: it speaks the `/v1/embeddings` and
 * `/v1/chat/completions` wire format, records every request, and answers through a handler the
 * test sets (or, by default, a deterministic embedding of each input).
 */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export type Reply = { status: number; body: unknown; headers?: Record<string, string> };

export interface FakeModelServer {
  /** The base URL, ending in /v1, as users configure it. */
  baseUrl: string;
  origin: string;
  requests: RecordedRequest[];
  /** Answers the next requests, in order (a reply may wait); when empty, the default answer is used. */
  queue: ((req: RecordedRequest) => Reply | Promise<Reply>)[];
  close(): Promise<void>;
}

/** A deterministic vector for a text: its length and character codes folded into 4 dimensions. */
export function fakeVector(text: string): number[] {
  const v = [text.length, 0, 0, 1];
  for (let i = 0; i < text.length; i++) v[1 + (i % 3)]! += text.charCodeAt(i);
  return v;
}

export function embeddingsReply(req: RecordedRequest, order: "forward" | "reverse" = "forward"): Reply {
  const input = req.body.input as string[];
  const data = input.map((text, index) => ({ object: "embedding", index, embedding: fakeVector(text) }));
  if (order === "reverse") data.reverse();
  return {
    status: 200,
    body: { object: "list", data, model: req.body.model, usage: { prompt_tokens: 1, total_tokens: 1 } },
  };
}

export function chatReply(content: string): Reply {
  return {
    status: 200,
    body: {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "test-model",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    },
  };
}

export function errorReply(status: number, message: string): Reply {
  return { status, body: { error: { message, type: "invalid_request_error", code: null } } };
}

export async function startFakeModelServer(): Promise<FakeModelServer> {
  const requests: RecordedRequest[] = [];
  const queue: FakeModelServer["queue"] = [];
  const server = await startHttpServer(async (req, res, raw) => {
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
    };
    requests.push(recorded);
    const next = queue.shift();
    const reply = next
      ? await next(recorded)
      : recorded.path === "/v1/embeddings"
        ? embeddingsReply(recorded)
        : errorReply(404, `no route ${recorded.path}`);
    json(res, reply.status, reply.body, reply.headers);
  });
  return { baseUrl: `${server.url}/v1`, origin: server.url, requests, queue, close: server.close };
}
