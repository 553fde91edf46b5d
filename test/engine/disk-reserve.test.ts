/**
 * Disk headroom, on the real file system of a temp data directory: the reserve is set just below
 * its free space, and a ballast file written into the directory takes the free space under it.
 * New content is then refused with 507 (nothing written, not even the upload's temporary file),
 * reads and deletes go on, a document queued before finishes; once the ballast is gone the same
 * request is taken, with no restart.
 */
import { closeSync, openSync, readdirSync, rmSync, statfsSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PROCESSING_FACTOR, parseDiskReserve } from "../../src/engine/disk-reserve.js";
import { type Engine, openEngine } from "../../src/engine/index.js";
import { UPLOADS_DIR } from "../../src/engine/routes/spool.js";
import { startTestServer, TEST_BACKEND, type TestServer, tempDir } from "../support/harness.js";
import { until } from "../support/wait.js";

const MiB = 1024 * 1024;
/**
 * How far below the free space the reserve sits, and how much more than that the ballast takes:
 * wide enough that other processes writing or removing files meanwhile do not cross it.
 */
const MARGIN = 256 * MiB;

const free = (dir: string) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

/** Writes `bytes` of zeros for real (not a sparse file): the file system's free space drops by as much. */
function ballast(path: string, bytes: number): void {
  const fd = openSync(path, "w");
  const piece = Buffer.alloc(16 * MiB);
  for (let left = bytes; left > 0; left -= piece.length)
    writeSync(fd, piece, 0, Math.min(left, piece.length));
  closeSync(fd);
}

let dir: ReturnType<typeof tempDir>;
let server: TestServer | undefined;
let worker: Engine | undefined;
afterEach(async () => {
  await server?.close();
  await worker?.close();
  server = undefined;
  worker = undefined;
  dir?.remove();
});

describe("parseDiskReserve", () => {
  it("reads a share of the disk or a size, 0 as none, and names the forms it takes", () => {
    expect(parseDiskReserve("5%")).toEqual({ percent: 5 });
    expect(parseDiskReserve("2GB")).toEqual({ bytes: 2e9 });
    expect(parseDiskReserve("512MiB")).toEqual({ bytes: 512 * MiB });
    expect(parseDiskReserve("1000")).toEqual({ bytes: 1000 });
    expect(parseDiskReserve("0")).toBeNull();
    expect(() => parseDiskReserve("100%")).toThrow(/below 100%.*2GB/);
    expect(() => parseDiskReserve("lots")).toThrow(/a size/);
  });
});

// The reserve guards the SQLite file's disk; PostgreSQL keeps its data on its own server.
describe.skipIf(TEST_BACKEND === "postgres")("the disk reserve", () => {
  it("refuses new content with 507 below the reserve, lets queued work finish, and takes writes again once space is back", async () => {
    dir = tempDir("memctx-reserve-");
    const reserve = free(dir.path) - MARGIN;
    // A free-space reading is reused for a moment: the test's clock moves past it after each change.
    let skew = 0;
    const nextReading = () => {
      skew += 60_000;
    };
    // No processing here: the queued document waits until the reserve is reached.
    server = await startTestServer(dir.path, {
      workers: 0,
      limits: { diskReserve: { bytes: reserve } },
      clock: () => Date.now() + skew,
    });
    const ns = server.client().ns("reserve");
    const count = async () => (await ns.documents.list()).pagination?.totalItems ?? -1;
    const queued = await ns.documents.add({ content: "Queued before the disk filled: Ada lives in Oslo." });

    const ballastPath = join(dir.path, "ballast");
    ballast(ballastPath, 2 * MARGIN);
    nextReading();
    const refused = await server.call("POST", "/ns/reserve/document", {
      body: { content: "a new document" },
    });
    expect(refused.status).toBe(507);
    const body = (await refused.json()) as { error: string; details: string };
    expect(body.error).toBe("Disk space low");
    expect(body.details).toMatch(
      /below the reserve of .*--disk-reserve \/ MEMCTX_DISK_RESERVE.*nothing was written/,
    );
    const form = new FormData();
    form.append("file", new Blob(["an uploaded note"], { type: "text/plain" }), "note.txt");
    const upload = await fetch(`${server.url}/ns/reserve/document/file`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}` },
      body: form,
    });
    expect(upload.status).toBe(507);
    expect(readdirSync(dir.path)).not.toContain(UPLOADS_DIR);
    const memories = await server.call("POST", "/v4/memories", {
      body: { memories: [{ content: "a memory" }], containerTag: "reserve" },
    });
    expect(memories.status).toBe(507);
    expect(await count()).toBe(1);
    // Reads go on, and the document queued before the reserve was reached is processed (by another
    // engine on the same data directory, as a second process would).
    expect((await server.call("POST", "/ns/reserve/search", { body: { query: "Oslo" } })).status).toBe(200);
    expect((await ns.documents.get(queued.id)).system.status).toBe("queued");
    worker = await openEngine({
      dataDir: dir.path,
      workers: 1,
      threads: false,
      embedder: null,
      log: () => {},
    });
    await until(
      async () => (await ns.documents.get(queued.id)).system.status,
      (s) => s === "done",
    );

    rmSync(ballastPath);
    nextReading();
    const again = await server.call("POST", "/ns/reserve/document", { body: { content: "a new document" } });
    expect(again.status).toBe(200);
    expect(await count()).toBe(2);
  });

  it("keeps room for the content still to process and for what a request brings, not only the setting", async () => {
    dir = tempDir("memctx-reserve-backlog-");
    server = await startTestServer(dir.path, {
      workers: 0,
      limits: { diskReserve: { bytes: free(dir.path) - MARGIN } },
    });
    const disk = server.engine.context.disk!;
    // A document queued (no processing here): PROCESSING_FACTOR x its content joins the reserve.
    const backlog = 8 * MiB;
    const queued = await server.call("POST", "/ns/reserve/document", {
      body: { content: "q".repeat(backlog) },
    });
    expect(queued.status).toBe(200);
    const state = await until(
      () => disk.state(),
      (s) => s.backlog >= backlog,
    );
    expect(state.reserve - (free(dir.path) - MARGIN)).toBeGreaterThanOrEqual(PROCESSING_FACTOR * backlog);
    // What is left above the setting: a request fits in it only with the backlog left out.
    const room = state.free - (state.reserve - PROCESSING_FACTOR * state.backlog);
    const size = Math.floor((room - (PROCESSING_FACTOR * backlog) / 2) / PROCESSING_FACTOR);
    expect(size).toBeGreaterThan(MiB);
    const refused = await server.call("POST", "/ns/reserve/document", {
      body: { content: "r".repeat(size) },
    });
    expect(refused.status).toBe(507);
    const body = (await refused.json()) as { error: string; details: string };
    expect(body.error).toBe("Disk space low");
    expect(body.details).toMatch(
      /plus 7x the \d+ MB of content still to process, plus 7x the \d+ MB this request brings/,
    );
    // A request that brings little still fits.
    expect((await server.call("POST", "/ns/reserve/document", { body: { content: "small" } })).status).toBe(
      200,
    );
  });
});
