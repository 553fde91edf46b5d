import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";

/** The data directory's folder of uploads in flight (0700: a file part is its caller's data). */
export const UPLOADS_DIR = "uploads";

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
    this.path = join(dir, `${randomBytes(12).toString("hex")}.part`);
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
