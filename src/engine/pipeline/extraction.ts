import { Worker } from "node:worker_threads";
import type { ResolvedContent } from "../ingest/content.js";
import { resolveFile } from "../ingest/file.js";
import { inflateLimits } from "../ingest/zip.js";
import type { StoredFile } from "../store/document-files.js";
import type { ExtractReply } from "./extract-thread.js";
import { threadEntry } from "./threads.js";

/** Heap (MB) one file's conversion may use before it fails. */
export const FILE_MEMORY_ENV = "MEMCTX_FILE_MEMORY_MB";
/** How long one file's conversion may take before it fails. */
export const FILE_TIMEOUT_ENV = "MEMCTX_FILE_TIMEOUT_MS";
export const FILE_MEMORY_DEFAULT_MB = 512;
export const FILE_TIMEOUT_DEFAULT_MS = 120_000;

/** Files converted by a library that builds the whole document in memory (mammoth, pdf.js, the HTML parser). */
const CONVERTED: ReadonlySet<StoredFile["kind"]> = new Set(["pdf", "docx", "html"]);

/** A conversion stopped at a limit: the message names it and its variable. */
export class ExtractionLimitError extends Error {
  override name = "ExtractionLimitError";
}

const positive = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return process.env[name] && Number.isFinite(v) && v > 0 ? v : fallback;
};

/**
 * A document's file to text. PDF, Word and HTML are converted in a thread of their own with a
 * capped heap and a deadline: a file that needs more (a zip bomb past the inflation limits, a
 * pathological PDF) fails its document, and the processing thread, with the other documents' jobs,
 * goes on. Text is only decoded, here.
 */
export async function extractFile(file: StoredFile, signal: AbortSignal): Promise<ResolvedContent> {
  if (!CONVERTED.has(file.kind)) return resolveFile(file);
  const memoryMb = positive(FILE_MEMORY_ENV, FILE_MEMORY_DEFAULT_MB);
  const timeoutMs = positive(FILE_TIMEOUT_ENV, FILE_TIMEOUT_DEFAULT_MS);
  const { url, execArgv } = threadEntry("extract-thread");
  const worker = new Worker(url, {
    // The limits as this thread reads them: a thread's environment is a copy made as it started.
    workerData: { file, limits: inflateLimits() },
    execArgv,
    resourceLimits: { maxOldGenerationSizeMb: memoryMb },
  });
  return new Promise<ResolvedContent>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      void worker.terminate();
      fn();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(
            new ExtractionLimitError(
              `converting the ${file.kind} file took longer than ${timeoutMs} ms, the limit per file (${FILE_TIMEOUT_ENV})`,
            ),
          ),
        ),
      timeoutMs,
    );
    const onAbort = () => settle(() => reject(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    worker.once("message", (m: ExtractReply) =>
      settle(() => (m.ok ? resolve(m.value) : reject(new Error(m.message)))),
    );
    worker.once("error", (err: Error & { code?: string }) =>
      settle(() =>
        reject(
          err.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? new ExtractionLimitError(
                `converting the ${file.kind} file needed more than ${memoryMb} MB of memory, the limit per file (${FILE_MEMORY_ENV})`,
              )
            : err,
        ),
      ),
    );
    worker.once("exit", (code) =>
      settle(() => reject(new Error(`the thread converting the file stopped (exit code ${code})`))),
    );
  });
}
