/**
 * MemoryClient: the typed v5 client. `client.ns("alice")` gives one namespace's API; the
 * organization-wide endpoints hang off the client. HTTP goes through undici with connection
 * reuse, or through an injected fetch handler (the embedded engine's `engine.fetch`).
 */
import type { EndpointName } from "../api/index.js";
import {
  type BodyOf,
  type QueryOf,
  RequestCore,
  type RequestInput,
  type RequestOptions,
  type ResponseOf,
} from "./core.js";
import { type AddDocumentFileInput, NamespaceClient, uploadFields } from "./namespace.js";
import { DEFAULT_MAX_RETRIES, DEFAULT_RETRY_BASE_MS } from "./retry.js";
import { type FetchHandler, handlerTransport, httpTransport, type Transport } from "./transport.js";
import type { WaitForOptions } from "./wait-for.js";

/** A legacy upload: as AddDocumentFileInput, with `containerTags` as an array. */
export type LegacyFileInput = Omit<BodyOf<"legacyAddFile">, "file" | "metadata" | "containerTags"> &
  Pick<AddDocumentFileInput, "file" | "filename" | "metadata"> & { containerTags?: string[] };

export const DEFAULT_TIMEOUT_MS = 60_000;
/** The base address used with an injected handler when none is given; it never reaches a network. */
export const IN_PROCESS_BASE_URL = "http://memctx.local";

export interface MemoryClientOptions {
  /** Where the API lives, e.g. `http://127.0.0.1:8787`; optional with `fetch`. */
  baseUrl?: string;
  apiKey: string;
  /** An in-process handler (`Request` in, `Response` out) instead of HTTP, e.g. `engine.fetch`. */
  fetch?: FetchHandler;
  /** Bounds each attempt; default 60 s. */
  timeoutMs?: number;
  /** Retries of a failed attempt where repeating is safe; default 2. */
  maxRetries?: number;
  /** Backoff base: waits are base * 2^n (capped at 8 s, ±25% jitter). Default 500 ms; tests shorten it. */
  retryBaseMs?: number;
}

export class MemoryClient {
  readonly #core: RequestCore;
  readonly #transport: Transport;

  constructor(opts: MemoryClientOptions) {
    const baseUrl = opts.baseUrl ?? (opts.fetch ? IN_PROCESS_BASE_URL : undefined);
    if (!baseUrl) throw new TypeError("MemoryClient needs a baseUrl (or a fetch handler)");
    const url = new URL(baseUrl); // throws on a malformed address
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`MemoryClient baseUrl must be http or https, got ${url.protocol}`);
    }
    if (!opts.apiKey) throw new TypeError("MemoryClient needs an apiKey");
    this.#transport = opts.fetch ? handlerTransport(opts.fetch) : httpTransport();
    this.#core = new RequestCore({
      baseUrl,
      apiKey: opts.apiKey,
      transport: this.#transport,
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxRetries: opts.maxRetries ?? DEFAULT_MAX_RETRIES,
      retryBaseMs: opts.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
    });
  }

  /** One namespace's API; throws InvalidRequestError at once when the name breaks the rule. */
  ns(namespace: string): NamespaceClient {
    return new NamespaceClient(this.#core, namespace);
  }

  /** Any endpoint of `src/api/endpoints.ts` by name: the core every method wraps. */
  request<N extends EndpointName>(
    name: N,
    input?: RequestInput<N>,
    opts?: RequestOptions,
  ): Promise<ResponseOf<N>> {
    return this.#core.request(name, input, opts);
  }

  readonly namespaces = {
    list: (query?: QueryOf<"listNamespaces">, opts?: RequestOptions) =>
      this.#core.request("listNamespaces", { query }, opts),
  };

  readonly organization = {
    get: (opts?: RequestOptions) => this.#core.request("getOrganization", {}, opts),
    update: (body: BodyOf<"patchOrganization">, opts?: RequestOptions) =>
      this.#core.request("patchOrganization", { body }, opts),
  };

  readonly connectors = {
    listAll: (opts?: RequestOptions) => this.#core.request("listAllConnectors", {}, opts),
  };

  /** Legacy POST /v3/documents/batch; failed items come back in the 200 (see failedBatchItems). */
  readonly batch = {
    add: (body: BodyOf<"batchAdd">, opts?: RequestOptions) => this.#core.request("batchAdd", { body }, opts),
  };

  /**
   * The legacy v3 and v4 endpoints, for integrations written against them: the namespace is the
   * body's `containerTag`, lists page in the body, `filters` take the v3/v4 form, search keeps the
   * legacy defaults (searchMode memories, threshold 0.6).
   */
  readonly legacy = {
    documents: {
      add: (body: BodyOf<"legacyAddDocument">, opts?: RequestOptions) =>
        this.#core.request("legacyAddDocument", { body }, opts),
      get: (id: string, opts?: RequestOptions) =>
        this.#core.request("legacyGetDocument", { params: { id } }, opts),
      chunks: (id: string, opts?: RequestOptions) =>
        this.#core.request("legacyDocumentChunks", { params: { id } }, opts),
      list: (body?: BodyOf<"legacyListDocuments">, opts?: RequestOptions) =>
        this.#core.request("legacyListDocuments", { body }, opts),
      delete: (id: string, opts?: RequestOptions) =>
        this.#core.request("legacyDeleteDocument", { params: { id } }, opts),
      deleteBulk: (ids: string[], opts?: RequestOptions) =>
        this.#core.request("legacyBulkDeleteDocuments", { body: { ids } }, opts),
      /** POST /v3/documents/file: the namespace is `containerTag`, the caller's id `customId`. */
      addFile: (input: LegacyFileInput, opts?: RequestOptions) => {
        const { containerTags, ...rest } = input;
        const body = {
          ...uploadFields(rest),
          ...(containerTags !== undefined ? { containerTags: JSON.stringify(containerTags) } : {}),
        };
        return this.#core.request("legacyAddFile", { body }, opts);
      },
    },
    conversations: {
      add: (body: BodyOf<"legacyAddConversation">, opts?: RequestOptions) =>
        this.#core.request("legacyAddConversation", { body }, opts),
    },
    memories: {
      add: (body: BodyOf<"legacyAddMemories">, opts?: RequestOptions) =>
        this.#core.request("legacyAddMemories", { body }, opts),
      update: (body: BodyOf<"legacyUpdateMemory">, opts?: RequestOptions) =>
        this.#core.request("legacyUpdateMemory", { body }, opts),
      forget: (body: BodyOf<"legacyForgetMemory">, opts?: RequestOptions) =>
        this.#core.request("legacyForgetMemory", { body }, opts),
      forgetMatching: (body: BodyOf<"legacyForgetMatching">, opts?: RequestOptions) =>
        this.#core.request("legacyForgetMatching", { body }, opts),
      list: (body?: BodyOf<"legacyListMemories">, opts?: RequestOptions) =>
        this.#core.request("legacyListMemories", { body }, opts),
    },
    search: (body: BodyOf<"legacySearch">, opts?: RequestOptions) =>
      this.#core.request("legacySearch", { body }, opts),
    profile: (body: BodyOf<"legacyProfile">, opts?: RequestOptions) =>
      this.#core.request("legacyProfile", { body }, opts),
    buckets: (body: BodyOf<"legacyBuckets">, opts?: RequestOptions) =>
      this.#core.request("legacyBuckets", { body }, opts),
  };

  waitForDocument(namespace: string, id: string, opts?: WaitForOptions) {
    return this.ns(namespace).documents.waitFor(id, opts);
  }

  /** Closes pooled HTTP connections; nothing to do with an injected handler. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
