import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connectorFetch } from "../../../src/engine/connectors/fetch.js";
import type { SyncContext, SyncItem, SyncItemDocument } from "../../../src/engine/connectors/types.js";

/** A real HTTP server on 127.0.0.1 (port 0) for a provider's wire format. */
export interface TestServer {
  url: string;
  /** Every request the server saw: method and path with query. */
  requests: { method: string; path: string; headers: IncomingMessage["headers"] }[];
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => unknown;

export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: TestServer["requests"] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push({ method: req.method ?? "GET", path: req.url ?? "/", headers: req.headers });
      Promise.resolve(handler(req, res, Buffer.concat(chunks).toString("utf8"))).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A sync context whose fetch is the engine's: safeFetch, here allowed onto loopback. */
export function syncContext(overrides: Partial<SyncContext> = {}): SyncContext {
  return {
    config: {},
    selection: null,
    credentials: null,
    documentLimit: 100,
    previous: new Map(),
    fetch: connectorFetch({ allowPrivateNetwork: true, timeoutMs: 10_000 }),
    signal: new AbortController().signal,
    ...overrides,
  };
}

export async function collect(items: AsyncIterable<SyncItem>): Promise<SyncItem[]> {
  const out: SyncItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

export function documentsOf(items: SyncItem[]): SyncItemDocument[] {
  return items.filter((i): i is SyncItemDocument => i.kind === "document");
}

/** The versions a sync produced, as the engine would pass them to the next sync. */
export function versionsOf(items: SyncItem[]): Map<string, string> {
  return new Map(documentsOf(items).map((d) => [d.externalId, d.version]));
}

/** A small valid PDF with one page of text (Helvetica), built with a correct xref table. */
export function makePdf(text: string): Buffer {
  const stream = `BT /F1 18 Tf 72 720 Td (${text.replace(/[()\\]/g, "\\$&")}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
