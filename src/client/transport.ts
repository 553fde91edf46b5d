/**
 * How a request reaches the API: over HTTP with undici (one keep-alive Agent per client, so
 * connections are reused), or through an in-process fetch handler (`Request` in, `Response` out),
 * for example the embedded engine's `engine.fetch`, which opens no socket.
 */
import type { Agent } from "undici";

/** A fetch-style handler: the embedded engine's `engine.fetch`, or any function of that shape. */
export type FetchHandler = (req: Request) => Promise<Response>;

export interface WireRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** JSON text, or a form for a file upload. */
  body: string | FormData | undefined;
  signal: AbortSignal;
}

export interface WireResponse {
  status: number;
  statusText: string;
  headers: Headers;
  text(): Promise<string>;
}

export interface Transport {
  send(req: WireRequest): Promise<WireResponse>;
  close(): Promise<void>;
}

/** undici loads on the first HTTP request: an in-process client (the embedded engine) never needs it. */
let undici: Promise<typeof import("undici")> | undefined;
export const loadUndici = () => {
  undici ??= import("undici");
  return undici;
};

export function httpTransport(): Transport {
  let agent: Agent | undefined;
  return {
    async send(r) {
      const { Agent, FormData: UndiciFormData, fetch: undiciFetch } = await loadUndici();
      agent ??= new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
      const res = await undiciFetch(r.url, {
        method: r.method,
        headers: r.headers,
        body: r.body instanceof FormData ? copyForm(r.body, new UndiciFormData()) : r.body,
        signal: r.signal,
        dispatcher: agent,
      });
      // undici's own Response class; structurally what WireResponse needs.
      return res as unknown as WireResponse;
    },
    close: async () => {
      await agent?.close();
    },
  };
}

/**
 * Node's global FormData is the copy of undici bundled with Node, which the undici package's fetch
 * does not take as a form (it would send its text): the parts move to the package's own FormData.
 */
function copyForm(from: FormData, to: import("undici").FormData): import("undici").FormData {
  from.forEach((value, name) => {
    if (typeof value === "string") to.append(name, value);
    else to.append(name, value, value.name);
  });
  return to;
}

export function handlerTransport(handler: FetchHandler): Transport {
  return {
    send(r) {
      const req = new Request(r.url, {
        method: r.method,
        headers: r.headers,
        body: r.body,
        signal: r.signal,
      });
      // A handler may ignore the signal; the call still ends when it fires.
      return raceAbort(
        Promise.resolve().then(() => handler(req)),
        r.signal,
      );
    },
    close: async () => {},
  };
}

/** Settles with `p`, or rejects with the signal's reason as soon as it fires. */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
