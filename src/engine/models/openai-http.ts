/**
 * The HTTP side of OpenAI-compatible model servers (OpenAI, Ollama, vLLM, LM Studio): where an
 * endpoint lives, and one JSON POST with a timeout and retries on 429 and 5xx.
 */

/** A model server request failed; the message names the URL and the model. */
export class ModelRequestError extends Error {
  override name = "ModelRequestError";
  constructor(
    message: string,
    readonly status: number | null = null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The URL of an endpoint ("/embeddings", "/chat/completions") under a configured base URL.
 * The rule, as the OpenAI SDK's baseURL: the path is appended to the base
 * ("https://api.openai.com/v1", "http://localhost:11434/v1"). A bare origin with no path gets
 * "/v1" first ("http://localhost:11434" -> ".../v1/embeddings"); a URL that already ends with the
 * endpoint's path is used as is.
 */
export function endpointUrl(base: string, path: "/embeddings" | "/chat/completions"): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new ModelRequestError(`not a valid model server URL: ${JSON.stringify(base)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ModelRequestError(`model server URL must be http or https: ${base}`);
  }
  let pathname = url.pathname.replace(/\/+$/, "");
  if (pathname.endsWith(path)) return url.href;
  if (pathname === "") pathname = "/v1";
  url.pathname = `${pathname}${path}`;
  return url.href;
}

export interface PostOptions {
  apiKey: string | null;
  timeoutMs: number;
  /** Extra attempts after a 429, a 5xx or a network error. */
  retries: number;
  /** First backoff; doubled each attempt, with jitter, and Retry-After honoured up to 10 s. */
  retryBaseMs: number;
  signal?: AbortSignal;
  /** What is being asked, for error messages: "embeddings request to <url> (model m)". */
  what: string;
}

export interface PostResult {
  status: number;
  body: unknown;
}

const RETRY_AFTER_MAX_MS = 10_000;

/** POSTs JSON; answers a 2xx's parsed body, or the status and body of a 4xx other than 429 (caller decides). */
export async function postJson(url: string, payload: unknown, opts: PostOptions): Promise<PostResult> {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  const body = JSON.stringify(payload);

  for (let attempt = 0; ; attempt++) {
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let response: Response;
    try {
      response = await fetch(url, { method: "POST", headers, body, signal });
    } catch (error) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      const reason = timeout.aborted ? `timed out after ${opts.timeoutMs} ms` : describe(error);
      if (attempt < opts.retries) {
        await sleep(backoff(opts.retryBaseMs, attempt), opts.signal);
        continue;
      }
      throw new ModelRequestError(`${opts.what} failed: ${reason}`, null, { cause: error });
    }
    const text = await response.text().catch(() => "");
    if (response.status === 429 || response.status >= 500) {
      if (attempt < opts.retries) {
        await sleep(retryDelay(response, opts.retryBaseMs, attempt), opts.signal);
        continue;
      }
      throw new ModelRequestError(
        `${opts.what} failed with HTTP ${response.status} after ${attempt + 1} attempts: ${serverMessage(parseOrText(text))}`,
        response.status,
      );
    }
    let parsed: unknown = text;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      if (response.ok) {
        throw new ModelRequestError(`${opts.what} answered something that is not JSON: ${excerpt(text)}`);
      }
    }
    return { status: response.status, body: parsed };
  }
}

/** The error for a 4xx answer, with the server's own message when it sent one. */
export function httpError(what: string, status: number, body: unknown): ModelRequestError {
  const hint =
    status === 401 || status === 403
      ? " (check the API key)"
      : status === 404
        ? " (check the URL and the model name)"
        : "";
  return new ModelRequestError(`${what} failed with HTTP ${status}${hint}: ${serverMessage(body)}`, status);
}

/** The `error.message` of an OpenAI-style error body, else the body itself, shortened. */
export function serverMessage(body: unknown): string {
  if (body && typeof body === "object") {
    const error = (body as { error?: unknown }).error;
    if (typeof error === "string") return excerpt(error);
    if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string") {
      return excerpt((error as { message: string }).message);
    }
    return excerpt(JSON.stringify(body));
  }
  return excerpt(String(body ?? ""));
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function retryDelay(response: Response, baseMs: number, attempt: number): number {
  const header = response.headers.get("retry-after");
  if (header !== null) {
    const seconds = Number(header);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
    if (Number.isFinite(ms) && ms >= 0) return Math.min(ms, RETRY_AFTER_MAX_MS);
  }
  return backoff(baseMs, attempt);
}

function backoff(baseMs: number, attempt: number): number {
  return baseMs * 2 ** attempt * (0.75 + Math.random() * 0.5);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat || "(empty body)";
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}
