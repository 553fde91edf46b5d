/**
 * An upload's file part is written to a file of the data directory as it arrives (0600), never held
 * whole in memory while it streams in, and the file is gone once the request is answered: stored,
 * refused or broken off.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openEngine } from "../../src/engine/index.js";
import { UPLOADS_DIR } from "../../src/engine/routes/spool.js";
import { serverPerFile, TEST_KEY, tempDir, testDatabase } from "../support/harness.js";
import { until } from "../support/wait.js";

const { server, dir } = serverPerFile({ workers: 0, prefix: "memctx-spool-" });

const spooled = () => {
  const d = join(dir, UPLOADS_DIR);
  try {
    return readdirSync(d).map((f) => ({
      mode: statSync(join(d, f)).mode & 0o777,
      size: statSync(join(d, f)).size,
    }));
  } catch {
    return [];
  }
};

/** An upload of `size` bytes of text over a raw socket, its head and first half sent now. */
function startUpload(size: number) {
  const { hostname, port } = new URL(server.url);
  const head = Buffer.from(
    `--B\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const tail = Buffer.from("\r\n--B--\r\n");
  const body = Buffer.alloc(size, "spooled words ");
  const socket: Socket = connect({ host: hostname, port: Number(port) });
  let answer = "";
  const answered = new Promise<string>((resolve) => {
    socket.on("data", (d) => {
      answer += d.toString();
      if (/\r\n\r\n[\s\S]*\}/.test(answer)) resolve(answer);
    });
    socket.on("close", () => resolve(answer));
  });
  socket.on("error", () => {});
  socket.write(
    `POST /ns/spool/document/file HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_KEY}\r\n` +
      `Content-Type: multipart/form-data; boundary=B\r\nContent-Length: ${head.length + size + tail.length}\r\n\r\n`,
  );
  socket.write(Buffer.concat([head, body.subarray(0, size / 2)]));
  return {
    finish: () => socket.write(Buffer.concat([body.subarray(size / 2), tail])),
    abort: () => socket.destroy(),
    answered,
  };
}

describe("an upload on its way in", () => {
  it("is written to a 0600 file of the data directory as it arrives, removed once the document is stored", async () => {
    const upload = startUpload(8 * 1024 * 1024);
    const [file] = await until(spooled, (f) => f.length === 1 && f[0]!.size >= 4 * 1024 * 1024);
    expect(file!.mode).toBe(0o600);
    upload.finish();
    expect(await upload.answered).toMatch(/^HTTP\/1\.1 200[\s\S]*"status":"queued"/);
    expect(spooled()).toEqual([]);
    const docs = await server.client().ns("spool").documents.list();
    expect(docs.documents).toHaveLength(1);
  });

  it("is removed when the caller goes away mid-upload, and nothing is stored", async () => {
    const upload = startUpload(4 * 1024 * 1024);
    await until(spooled, (f) => f.length === 1);
    upload.abort();
    await until(spooled, (f) => f.length === 0);
    const docs = await server.client().ns("spool").documents.list();
    expect(docs.documents).toHaveLength(1);
  });
});

describe("spool files a crash left", () => {
  it("are removed when an engine opens the data directory; a live process's upload stays", async () => {
    const data = tempDir("memctx-stale-spool-");
    try {
      const uploads = join(data.path, UPLOADS_DIR);
      mkdirSync(uploads, { recursive: true });
      // A process that has exited: its upload was never finished nor removed.
      const gone = spawnSync(process.execPath, ["-e", ""]).pid;
      const dead = join(uploads, `${gone}-0123456789abcdef01234567.part`);
      const live = join(uploads, `${process.pid}-0123456789abcdef01234567.part`);
      // Named without its writer (an older memctx): stale once untouched for an hour.
      const old = join(uploads, "00112233445566778899aabb.part");
      const recent = join(uploads, "ffeeddccbbaa998877665544.part");
      for (const f of [dead, live, old, recent]) writeFileSync(f, "half an upload");
      const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
      utimesSync(old, twoHoursAgo, twoHoursAgo);
      const engine = await openEngine({ dataDir: data.path, workers: 0, ...testDatabase(), log: () => {} });
      await engine.close();
      expect(readdirSync(uploads).sort()).toEqual(
        [live, recent].map((f) => f.slice(uploads.length + 1)).sort(),
      );
    } finally {
      data.remove();
    }
  });
});
