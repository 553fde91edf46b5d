import { startServer } from "./src/engine/server.js";
import { mkdtempSync } from "node:fs";
import { request } from "node:http";
const dir = mkdtempSync("/tmp/ep-");
const KEY = "mk_test_local_organization_key";
const s = await startServer({ dataDir: dir, port: 0, host: "127.0.0.1", apiKey: KEY, workers: 0, log: () => {} });
const results: Record<string, number> = {};
const note = (k: string) => { results[k] = (results[k] ?? 0) + 1; };
const body = JSON.stringify({ content: "a".repeat(33 * 1024 * 1024) });
for (let i = 0; i < 5; i++) {
  try { const r = await fetch(`${s.url}/ns/x/document`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body }); note(`fetch json ${r.status}`); await r.text(); }
  catch (e: any) { note(`fetch json error ${e.cause?.code ?? e.message}`); }
}
// chunked (no content-length): stream
for (let i = 0; i < 5; i++) {
  const stream = new ReadableStream({ start(c) { for (let j = 0; j < 40; j++) c.enqueue(new TextEncoder().encode("a".repeat(1024 * 1024))); c.close(); } });
  try { const r = await fetch(`${s.url}/ns/x/document`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: stream, duplex: "half" } as any); note(`fetch chunked ${r.status}`); await r.text(); }
  catch (e: any) { note(`fetch chunked error ${e.cause?.code ?? e.message}`); }
}
for (let i = 0; i < 3; i++) {
  const f = new FormData(); f.append("file", new Blob([Buffer.alloc(60 * 1024 * 1024, 97)]), "big.txt");
  try { const r = await fetch(`${s.url}/ns/x/document/file`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: f }); note(`fetch multipart ${r.status}`); await r.text(); }
  catch (e: any) { note(`fetch multipart error ${e.cause?.code ?? e.message}`); }
}
for (let i = 0; i < 5; i++) {
  await new Promise<void>((res) => {
    const req = request(`${s.url}/ns/x/document`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (r) => { note(`http ${r.statusCode}`); r.resume(); r.on("end", res); });
    req.on("error", (e: any) => { note(`http error ${e.code}`); res(); });
    req.end(body);
  });
}
console.log(results);
await s.close();
