import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ResolvedContent } from "../ingest/content.js";
import { resolveFile } from "../ingest/file.js";
import { inflateLimits } from "../ingest/zip.js";
import type { StoredFile } from "../store/document-files.js";
import type { ExtractReply } from "./extract-process.js";
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
 * A document's file to text. PDF, Word and HTML are converted in a child process of their own with a
 * capped heap and a deadline: a file that needs more (a zip bomb past the inflation limits, a
 * pathological PDF) fails its document, and the processing thread, with the other documents' jobs,
 * goes on. Text is only decoded, here.
 */
export async function extractFile(file: StoredFile, signal: AbortSignal): Promise<ResolvedContent> {
  if (!CONVERTED.has(file.kind)) return resolveFile(file);
  const memoryMb = positive(FILE_MEMORY_ENV, FILE_MEMORY_DEFAULT_MB);
  const timeoutMs = positive(FILE_TIMEOUT_ENV, FILE_TIMEOUT_DEFAULT_MS);
  const { url, execArgv } = threadEntry("pipeline/extract-process");
  const child = fork(fileURLToPath(url), [], {
    execArgv: [...execArgv, `--max-old-space-size=${memoryMb}`],
    serialization: "advanced",
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  // V8's own words when the heap cap is reached ("JavaScript heap out of memory", "Allocation failed").
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString();
  });
  child.send({ file, limits: inflateLimits() });
  return new Promise<ResolvedContent>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      child.kill("SIGKILL");
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
    child.once("message", (m: ExtractReply) =>
      settle(() => (m.ok ? resolve(m.value) : reject(new Error(m.message)))),
    );
    child.once("error", (err: Error) => settle(() => reject(err)));
    child.once("exit", (code, signal) =>
      settle(() =>
        reject(
          /out of memory|Allocation failed|heap limit/i.test(stderr) || signal === "SIGABRT" || code === 134
            ? new ExtractionLimitError(
                `converting the ${file.kind} file needed more than ${memoryMb} MB of memory, the limit per file (${FILE_MEMORY_ENV})`,
              )
            : new Error(`the process converting the file stopped (${signal ?? `exit code ${code}`})`),
        ),
      ),
    );
  });
}
