import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";

/** The data directory's folder of uploads in flight (0700: a file part is its caller's data). */
export const UPLOADS_DIR = "uploads";
const PART = ".part";
/** A spool file named without its writer (older memctx) counts as stale once untouched this long. */
const UNNAMED_STALE_MS = 60 * 60 * 1000;

/**
 * Removes the spool files a crash left (a process killed mid-upload never reaches its cleanup),
 * run as the engine opens: those whose writing process is gone. A live process's upload, on the
 * same data directory, is left alone. Returns how many were removed.
 */
export async function removeStaleSpools(dataDir: string, now = Date.now()): Promise<number> {
  const dir = join(dataDir, UPLOADS_DIR);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0; // no uploads yet
  }
  let removed = 0;
  for (const name of names) {
    if (!name.endsWith(PART)) continue;
    const file = join(dir, name);
    const pid = /^(\d+)-/.exec(name)?.[1];
    const stale = pid
      ? Number(pid) !== process.pid && !processAlive(Number(pid))
      : await stat(file).then(
          (s) => now - s.mtimeMs > UNNAMED_STALE_MS,
          () => false,
        );
    if (
      stale &&
      (await rm(file, { force: true }).then(
        () => true,
        () => false,
      ))
    )
      removed++;
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * An upload's file part on its way in: written to a file of its own (0600) in the data directory
 * as its chunks arrive, read back whole only once it is complete, removed once the request ends.
 */
export class Spool {
  readonly path: string;
  private readonly out: WriteStream;

  /** `onError`: the file could not be written (a full disk): the upload fails with that error. */
  constructor(dataDir: string, onError: (err: Error) => void) {
    const dir = join(dataDir, UPLOADS_DIR);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // The writing process's id first: a start tells its own stale files from a live process's.
    this.path = join(dir, `${process.pid}-${randomBytes(12).toString("hex")}${PART}`);
    this.out = createWriteStream(this.path, { flags: "wx", mode: 0o600 });
    this.out.on("error", onError);
  }

  /** Writes a chunk; `false` when the file is behind: wait for `drained()` before the next. */
  write(chunk: Buffer): boolean {
    return this.out.write(chunk);
  }

  /** Resolves once the file takes more, or is closed; never rejects (onError hears the error). */
  drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.out.off("drain", done).off("close", done);
        resolve();
      };
      this.out.once("drain", done).once("close", done);
    });
  }

  /** The whole file, once every chunk is written. */
  async read(): Promise<Buffer> {
    const closed = once(this.out, "close");
    this.out.end();
    await closed;
    return readFile(this.path);
  }

  async remove(): Promise<void> {
    if (!this.out.closed) {
      const closed = once(this.out, "close");
      this.out.destroy();
      await closed.catch(() => {});
    }
    await rm(this.path, { force: true });
  }
}
