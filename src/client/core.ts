/**
 * The one request path every method goes through: validate the input against the endpoint's
 * schemas (nothing is sent when it breaks the contract), build path, query and body from the
 * endpoint table, send with a per-attempt timeout, map errors, retry where safe, parse the answer.
 */
import type { z } from "zod";
import { describeIssues, type EndpointName, type Endpoints, endpoints, fillPath } from "../api/index.js";
import { VERSION } from "../version.js";
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  errorFromResponse,
  InvalidRequestError,
  InvalidResponseError,
  MemoryApiError,
} from "./errors.js";
import { isRetryable, isRetrySafe, retryDelayMs } from "./retry.js";
import { raceAbort, type Transport, type WireResponse } from "./transport.js";

type Ep<N extends EndpointName> = Endpoints[N];
type Schema<T> = T extends z.ZodType ? T : never;

export type ParamsOf<N extends EndpointName> = z.input<Ep<N>["params"]>;
/** Query options as their typed values (numbers, booleans, arrays); serialized for the wire by the core. */
export type QueryOf<N extends EndpointName> = Partial<z.output<Schema<NonNullable<Ep<N>["query"]>>>>;
export type BodyOf<N extends EndpointName> = z.input<Schema<NonNullable<Ep<N>["body"]>>>;
export type ResponseOf<N extends EndpointName> = z.output<Ep<N>["response"]>;

export interface RequestInput<N extends EndpointName> {
  params?: ParamsOf<N>;
  query?: QueryOf<N>;
  body?: BodyOf<N>;
}

/** Per call: overrides of the client's settings, and the caller's AbortSignal. */
export interface RequestOptions {
  signal?: AbortSignal;
  /** Bounds each attempt, reading the answer included. */
  timeoutMs?: number;
  maxRetries?: number;
}

export interface CoreConfig {
  baseUrl: string;
  apiKey: string;
  transport: Transport;
  timeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
}

interface Prepared {
  method: string;
  url: string;
  body: string | FormData | undefined;
  retrySafe: boolean;
}

export class RequestCore {
  readonly #c: CoreConfig;
  readonly #base: string;

  constructor(config: CoreConfig) {
    this.#c = config;
    this.#base = config.baseUrl.replace(/\/+$/, "");
  }

  async request<N extends EndpointName>(
    name: N,
    input: RequestInput<N> = {},
    opts: RequestOptions = {},
  ): Promise<ResponseOf<N>> {
    const prepared = this.#prepare(name, input);
    const maxRetries = opts.maxRetries ?? this.#c.maxRetries;
    for (let retry = 0; ; retry++) {
      if (opts.signal?.aborted) throw userAbort(opts.signal);
      try {
        return await this.#attempt(name, prepared, opts);
      } catch (err) {
        if (!prepared.retrySafe || retry >= maxRetries || !isRetryable(err)) throw err;
        await sleep(retryDelayMs(err, retry, this.#c.retryBaseMs), opts.signal);
      }
    }
  }

  #prepare<N extends EndpointName>(name: N, input: RequestInput<N>): Prepared {
    const ep = endpoints[name] as Ep<EndpointName>;
    const params = (input.params ?? {}) as Record<string, string>;
    const p = ep.params.safeParse(params);
    if (!p.success) throw new InvalidRequestError("path", p.error.issues);

    let search = "";
    if ("query" in ep && ep.query) {
      const query = (input.query ?? {}) as Record<string, unknown>;
      const q = ep.query.safeParse(query);
      if (!q.success) throw new InvalidRequestError("query", q.error.issues);
      search = queryString(query);
    }

    let body: string | FormData | undefined;
    if ("body" in ep && ep.body) {
      const value = input.body ?? {};
      const b = ep.body.safeParse(value);
      if (!b.success) throw new InvalidRequestError("body", b.error.issues);
      body = "bodyType" in ep && ep.bodyType === "multipart" ? formData(value) : JSON.stringify(value);
    }

    return {
      method: ep.method,
      url: `${this.#base}${fillPath(ep.path, params)}${search}`,
      body,
      retrySafe: isRetrySafe(name, input.body),
    };
  }

  async #attempt<N extends EndpointName>(name: N, r: Prepared, opts: RequestOptions): Promise<ResponseOf<N>> {
    const timeoutMs = opts.timeoutMs ?? this.#c.timeoutMs;
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new APITimeoutError(`${r.method} ${r.url} timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout.signal]) : timeout.signal;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#c.apiKey}`,
      "user-agent": `memctx/${VERSION}`,
      accept: "application/json",
    };
    // A form sets its own content type, with its boundary.
    if (typeof r.body === "string") headers["content-type"] = "application/json";

    let res: WireResponse;
    let text: string;
    try {
      res = await this.#c.transport.send({ url: r.url, method: r.method, headers, body: r.body, signal });
      text = await raceAbort(res.text(), signal);
    } catch (err) {
      if (opts.signal?.aborted) throw userAbort(opts.signal);
      if (timeout.signal.aborted) throw timeout.signal.reason as APITimeoutError;
      if (err instanceof MemoryApiError) throw err;
      throw connectionError(r, err);
    } finally {
      clearTimeout(timer);
    }

    if (res.status < 200 || res.status >= 300) {
      throw errorFromResponse(res.status, res.statusText, res.headers, text);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new InvalidResponseError(
        `${r.method} ${r.url} answered ${res.status} with a body that is not JSON`,
        {
          status: res.status,
          headers: res.headers,
        },
      );
    }
    const parsed = endpoints[name].response.safeParse(json);
    if (!parsed.success) {
      throw new InvalidResponseError(
        `${r.method} ${r.url} answered a body that breaks the contract: ${describeIssues("response", parsed.error.issues)}`,
        { status: res.status, headers: res.headers },
      );
    }
    return parsed.data as ResponseOf<N>;
  }
}

/** A multipart body: files as file parts, every other field as a text part (undefined left out). */
function formData(fields: object): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    if (v instanceof Blob) form.append(k, v, v instanceof File ? v.name : "file");
    else form.append(k, String(v));
  }
  return form;
}

/** `?a=1&include=chunks,memories`: arrays comma-separated, undefined left out. */
export function queryString(query: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    const value = Array.isArray(v)
      ? v.map((x) => encodeURIComponent(String(x))).join(",")
      : encodeURIComponent(String(v));
    parts.push(`${encodeURIComponent(k)}=${value}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

function userAbort(signal: AbortSignal): APIUserAbortError {
  const reason: unknown = signal.reason;
  return new APIUserAbortError("the request was aborted", reason === undefined ? {} : { cause: reason });
}

function connectionError(r: Prepared, err: unknown): APIConnectionError {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return new APIConnectionError(`${r.method} ${r.url} failed: ${why}`, { cause: err });
}

/** Waits `ms`; the caller's signal ends the wait with APIUserAbortError. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(userAbort(signal));
    const onAbort = () => {
      clearTimeout(t);
      reject(userAbort(signal!));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
