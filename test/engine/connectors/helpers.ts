import { connectorFetch } from "../../../src/engine/connectors/fetch.js";
import type { SyncContext, SyncItem, SyncItemDocument } from "../../../src/engine/connectors/types.js";

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
