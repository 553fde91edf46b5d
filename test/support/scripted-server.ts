/**
 * A real HTTP server on 127.0.0.1 for client wire tests: it records every request it receives
 * and answers from a script (a queue of replies, then a fallback).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import { MemoryClient, type MemoryClientOptions } from "../../src/client/index.js";
import { perFile } from "./per-file.js";

export interface Received {
  method: string;
  /** The raw request target, as sent: path and query, still percent-encoded. */
  target: string;
  /** The raw path, still percent-encoded. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, or undefined when there is none. */
  json: unknown;
  /** The client's port: the same for requests over one reused connection. */
  remotePort: number | undefined;
  /** When it arrived (ms, monotonic). */
  at: number;
}

export type Reply =
  | { status?: number; headers?: Record<string, string>; json?: unknown; text?: string }
  | "hang" // never answer
  | "destroy"; // drop the connection without an answer

export type Responder = Reply | ((req: Received) => Reply);

export interface ScriptedServer {
  url: string;
  received: Received[];
  /** Queue replies, used in order, one per request. */
  reply(...replies: Responder[]): void;
  /** What answers once the queue is empty (default: 200 `{}`). */
  fallback: Responder;
  /** Forget what was received and queued; the fallback goes back to 200 `{}`. */
  reset(): void;
  close(): Promise<void>;
}

export async function startServer(): Promise<ScriptedServer> {
  const queue: Responder[] = [];
  const received: Received[] = [];
  const state = { fallback: { status: 200, json: {} } as Responder };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const target = req.url ?? "/";
      const q = target.indexOf("?");
      const body = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const r: Received = {
        method: req.method ?? "",
        target,
        path: q === -1 ? target : target.slice(0, q),
        query: new URLSearchParams(q === -1 ? "" : target.slice(q + 1)),
        headers: req.headers,
        body,
        json,
        remotePort: req.socket.remotePort,
        at: performance.now(),
      };
      received.push(r);
      const responder = queue.shift() ?? state.fallback;
      const reply = typeof responder === "function" ? responder(r) : responder;
      if (reply === "hang") return;
      if (reply === "destroy") {
        req.socket.destroy();
        return;
      }
      const text = reply.text ?? JSON.stringify(reply.json ?? {});
      res.writeHead(reply.status ?? 200, {
        "content-type": reply.text !== undefined ? "text/plain" : "application/json",
        ...reply.headers,
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    reply: (...r) => queue.push(...r),
    reset: () => {
      queue.length = 0;
      received.length = 0;
      state.fallback = { status: 200, json: {} };
    },
    get fallback() {
      return state.fallback;
    },
    set fallback(r: Responder) {
      state.fallback = r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port that was just free and is closed now: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Minimal valid bodies of the contract's responses, for scripted answers. */
export const ts = { createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z" };
export const documentBody = (id: string, status = "done", dreamingStatus = "done", extra = {}) => ({
  id,
  type: "text",
  metadata: {},
  system: { status, dreamingStatus, ...ts },
  ...extra,
});
export const emptyList = {
  documents: [],
  chunks: [],
  memories: [],
  pagination: { currentPage: 1, totalPages: 1 },
};

/**
 * The scripted server for a whole file, and a client of it: what was received and queued is
 * forgotten after each test. `client` takes the client's options (default: no retries).
 */
export function scriptedServerPerFile(
  clientOptions: Omit<MemoryClientOptions, "baseUrl" | "apiKey"> = { maxRetries: 0 },
): { server: ScriptedServer; client: MemoryClient } {
  const server = perFile(startServer, (s) => s.close());
  const client = perFile(
    () => new MemoryClient({ baseUrl: server.url, apiKey: "mk_test", ...clientOptions }),
    (c) => c.close(),
  );
  afterEach(() => server.reset());
  return { server, client };
}
