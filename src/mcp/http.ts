/**
 * Streamable HTTP hosting at `/mcp`: one transport and one McpServer per session, the namespace
 * fixed per session at initialize (X-Memctx-Namespace header or ?namespace=), bearer keys checked
 * through the API itself, Host and Origin validated, closed sessions cleaned up, idle ones expired.
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { Namespace, READ_ONLY_KEY } from "../api/index.js";
import {
  APIConnectionError,
  AuthenticationError,
  MemoryApiError,
  type MemoryClient,
  NotFoundError,
  PermissionDeniedError,
} from "../client/index.js";
import { IDLE_TIMEOUT_DEFAULT_MS, MCP_PATH, NAMESPACE_HEADER } from "./http-settings.js";
import { createMcpServer } from "./server.js";

export { IDLE_TIMEOUT_DEFAULT_MS, MCP_PATH, NAMESPACE_HEADER };

/** JSON-RPC messages are small; anything bigger than this is refused before parsing. */
const BODY_MAX_BYTES = 8 * 1024 * 1024;

export interface HttpServerOptions {
  /** A client acting with the caller's key; closed when the session ends. */
  clientFor(apiKey: string): MemoryClient;
  /** Namespace of a session whose initialize names none. */
  defaultNamespace: string;
  host?: string;
  port?: number;
  /** The API's address when remote, for error messages. */
  apiUrl?: string;
  idleTimeoutMs?: number;
  /** Origins allowed besides this server's own (http(s)://localhost:PORT and the like). */
  allowedOrigins?: string[];
  /** Host headers allowed besides the bind host and the loopback names (e.g. "memctx.lan:3333"). */
  allowedHosts?: string[];
  readOnly?: boolean;
  /** Where a caller finds a key this server accepts, for the 401 answer and the resource metadata. */
  keyHint?: string;
  log?: (message: string) => void;
}

/** Where OAuth clients look for this resource's metadata (RFC 9728), at the root and per path. */
const RESOURCE_METADATA_PATHS = [
  "/.well-known/oauth-protected-resource",
  `/.well-known/oauth-protected-resource${MCP_PATH}`,
];
/** What /mcp answers to: POST for messages, GET for the server's stream, DELETE to end a session. */
const MCP_METHODS = ["GET", "POST", "DELETE"];

export interface McpHttpServer {
  /** e.g. http://127.0.0.1:3333/mcp */
  url: string;
  port: number;
  sessionCount(): number;
  close(): Promise<void>;
}

interface Session {
  id: string;
  namespace: string;
  keyHash: Buffer;
  transport: StreamableHTTPServerTransport;
  client: MemoryClient;
  lastSeen: number;
  active: number;
  closed: boolean;
  close(): Promise<void>;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest();

/** A JSON-RPC error body, as the SDK's transport answers. */
function reject(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

function bearer(req: IncomingMessage): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  return m?.[1];
}

async function readJson(
  req: IncomingMessage,
): Promise<{ ok: true; body: unknown } | { ok: false; status: number; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_MAX_BYTES)
      return { ok: false, status: 413, message: `request body over ${BODY_MAX_BYTES} bytes` };
    chunks.push(chunk as Buffer);
  }
  try {
    return { ok: true, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch {
    return { ok: false, status: 400, message: "Parse error: the body is not JSON" };
  }
}

/** Host names this server answers to: the bind host and the loopback names, with the port. */
function allowedHostsFor(bindHost: string, port: number): Set<string> {
  const hosts = new Set([
    "localhost",
    "127.0.0.1",
    "[::1]",
    bindHost.includes(":") ? `[${bindHost}]` : bindHost,
  ]);
  return new Set([...hosts].map((h) => `${h}:${port}`.toLowerCase()));
}

/**
 * The key must work for the namespace: a cheap authenticated read of it. 401 for a bad key,
 * 403 for a key limited to other namespaces; an unknown namespace (404) is fine, it starts empty.
 */
export async function authorizeSession(client: MemoryClient, namespace: string): Promise<void> {
  try {
    await client.ns(namespace).documents.list({ limit: 1 }, undefined, { maxRetries: 0 });
  } catch (err) {
    if (err instanceof NotFoundError) return;
    throw err;
  }
}

/** A document id that no caller has: deleting it deletes nothing. */
const PROBE_ID = `memctx-read-only-probe-${randomUUID()}`;

/**
 * Whether the key may only read (`memctx keys create --read-only`): its session then lists the
 * read tools only, as `--read-only` does. Asked without changing anything: a delete of an id no
 * document has, which a read-write key is answered 200 (nothing found) and a read-only one 403
 * `Read-only API key` before anything is read. Anything else (another service's answer, an error)
 * counts as read-write: its write tools then say what the service answers.
 */
export async function keyIsReadOnly(client: MemoryClient, namespace: string): Promise<boolean> {
  try {
    await client.ns(namespace).documents.delete([PROBE_ID], { maxRetries: 0 });
    return false;
  } catch (err) {
    return err instanceof PermissionDeniedError && err.body?.error === READ_ONLY_KEY;
  }
}

export async function startHttpServer(opts: HttpServerOptions): Promise<McpHttpServer> {
  const host = opts.host ?? "127.0.0.1";
  const idleMs = opts.idleTimeoutMs ?? IDLE_TIMEOUT_DEFAULT_MS;
  const log = opts.log ?? (() => {});
  const sessions = new Map<string, Session>();
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();

  const openSession = async (req: IncomingMessage, res: ServerResponse, key: string, body: unknown) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const requested =
      (req.headers[NAMESPACE_HEADER] as string | undefined) ?? url.searchParams.get("namespace");
    const parsed = Namespace.safeParse(requested ?? opts.defaultNamespace);
    if (!parsed.success) {
      return reject(res, 400, `namespace ${JSON.stringify(requested)}: ${parsed.error.issues[0]?.message}`);
    }
    const namespace = parsed.data;
    const client = opts.clientFor(key);
    try {
      await authorizeSession(client, namespace);
    } catch (err) {
      await client.close();
      if (err instanceof AuthenticationError) {
        return reject(res, 401, `Invalid API key (${keyHint})`, {
          "www-authenticate": 'Bearer realm="memctx", error="invalid_token"',
        });
      }
      if (err instanceof PermissionDeniedError) {
        return reject(res, 403, `This API key may not use namespace ${namespace}`);
      }
      if (err instanceof APIConnectionError || err instanceof MemoryApiError) {
        return reject(res, 502, `The memory service could not check the key: ${err.message}`);
      }
      throw err;
    }

    const readOnly = opts.readOnly === true || (await keyIsReadOnly(client, namespace));
    const server = createMcpServer({
      client,
      namespace,
      ...(opts.apiUrl ? { apiUrl: opts.apiUrl } : {}),
      ...(readOnly ? { readOnly: true } : {}),
      log,
    });
    let session: Session | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session = {
          id,
          namespace,
          keyHash: sha256(key),
          transport,
          client,
          lastSeen: Date.now(),
          active: 0,
          closed: false,
          async close() {
            if (this.closed) return;
            this.closed = true;
            sessions.delete(id);
            await server.close().catch(() => {});
            await client.close().catch(() => {});
            log(`session ${id} (${namespace}) closed`);
          },
        };
        sessions.set(id, session);
        log(`session ${id} opened for namespace ${namespace}`);
      },
      onsessionclosed: (id) => {
        void sessions.get(id)?.close();
      },
    });
    await server.connect(transport);
    // The transport closing (DELETE, expiry, shutdown) ends the session. Chain: the server watches it too.
    const previous = server.server.onclose;
    server.server.onclose = () => {
      previous?.();
      void session?.close();
    };
    await transport.handleRequest(req, res, body);
    if (!session) {
      // The initialize failed (for example a bad protocol version): nothing to keep.
      await server.close().catch(() => {});
      await client.close().catch(() => {});
    }
  };

  const keyHint = opts.keyHint ?? "ask the server's operator for an API key";
  const missingKey = `Missing API key: send Authorization: Bearer <key> (${keyHint}). This server takes bearer keys, not OAuth sign-in.`;

  /**
   * RFC 9728 metadata for clients that look for OAuth: this resource takes bearer keys in the
   * header and names no authorization server, so there is no sign-in flow to start.
   */
  const resourceMetadata = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" });
      return res.end();
    }
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(
      JSON.stringify({
        resource: `http://${req.headers.host}${MCP_PATH}`,
        resource_name: "memctx MCP server",
        authorization_servers: [],
        bearer_methods_supported: ["header"],
        resource_documentation: `Send Authorization: Bearer <key> on every request: ${keyHint}. No OAuth sign-in.`,
      }),
    );
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    // DNS rebinding: a page may reach 127.0.0.1 under another name; only our own names pass.
    if (!allowedHosts.has((req.headers.host ?? "").toLowerCase())) {
      const asked = req.headers.host ?? "";
      return reject(
        res,
        403,
        `Host ${JSON.stringify(asked)} is not allowed; to accept it, start memctx mcp --http with --allowed-host ${asked || "HOST:PORT"}`,
      );
    }
    if (RESOURCE_METADATA_PATHS.includes(url.pathname)) return resourceMetadata(req, res);
    if (url.pathname !== MCP_PATH) return reject(res, 404, `Not found: the MCP endpoint is ${MCP_PATH}`);
    if (!MCP_METHODS.includes(req.method ?? "")) {
      return reject(res, 405, `Method ${req.method} is not allowed on ${MCP_PATH}`, {
        allow: MCP_METHODS.join(", "),
      });
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) {
      return reject(res, 403, `Origin ${origin} is not allowed`);
    }
    const key = bearer(req);
    if (!key) {
      return reject(res, 401, missingKey, { "www-authenticate": 'Bearer realm="memctx"' });
    }

    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      if (!session)
        return reject(res, 404, "Session not found: it was closed or expired; initialize a new one");
      const hash = sha256(key);
      if (!timingSafeEqual(hash, session.keyHash)) {
        return reject(res, 403, "This session belongs to another API key");
      }
      // A GET holds the stream for server messages open for the whole session: it is not activity.
      const counts = req.method !== "GET";
      session.lastSeen = Date.now();
      if (counts) session.active++;
      try {
        let body: unknown;
        if (req.method === "POST") {
          const read = await readJson(req);
          if (!read.ok) return reject(res, read.status, read.message);
          body = read.body;
        }
        await session.transport.handleRequest(req, res, body);
      } finally {
        if (counts) session.active--;
        session.lastSeen = Date.now();
      }
      return;
    }

    if (req.method !== "POST")
      return reject(res, 400, "Bad Request: no mcp-session-id; send initialize first");
    const read = await readJson(req);
    if (!read.ok) return reject(res, read.status, read.message);
    if (!isInitializeRequest(read.body)) {
      return reject(res, 400, "Bad Request: no mcp-session-id; the first request of a session is initialize");
    }
    await openSession(req, res, key, read.body);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log(
        `error on ${req.method} ${req.url}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
      reject(res, 500, "Internal server error");
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(opts.port ?? 3333, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  allowedHosts = new Set([
    ...allowedHostsFor(host, port),
    ...(opts.allowedHosts ?? []).map((h) => h.toLowerCase()),
  ]);
  allowedOrigins = new Set([
    ...[...allowedHosts].flatMap((h) => [`http://${h}`, `https://${h}`]),
    ...(opts.allowedOrigins ?? []).map((o) => o.toLowerCase().replace(/\/$/, "")),
  ]);

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const s of sessions.values()) {
        if (s.active === 0 && now - s.lastSeen > idleMs) {
          log(`session ${s.id} idle for ${Math.round((now - s.lastSeen) / 1000)} s: expired`);
          void s.transport.close().finally(() => s.close());
        }
      }
    },
    Math.max(10, Math.min(idleMs / 2, 60_000)),
  );
  sweep.unref();

  const displayHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${displayHost}:${port}${MCP_PATH}`,
    port,
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.transport.close().finally(() => s.close())));
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
