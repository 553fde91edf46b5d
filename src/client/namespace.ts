/**
 * The API of one namespace, grouped as the API is: documents, chunks, memories, search, profile,
 * the namespace itself and its connectors. Each method is a thin wrapper over the core's request.
 */
import { type Metadata, Namespace } from "../api/index.js";
import type { BodyOf, QueryOf, RequestCore, RequestOptions } from "./core.js";
import { InvalidRequestError } from "./errors.js";
import { type WaitForOptions, waitForDocument } from "./wait-for.js";

/** The add body; `dreaming` and `taskType` travel in the query string (the spec's stated location). */
export type AddDocumentInput = BodyOf<"addDocument">;

/**
 * An upload: the file's bytes (a File keeps its name and type; other bytes take `filename`), and
 * the add's options, with metadata as objects (they travel as JSON strings).
 */
export type AddDocumentFileInput = Omit<
  BodyOf<"addDocumentFile">,
  "file" | "metadata" | "filterByMetadata"
> & {
  file: Blob | Uint8Array;
  filename?: string;
  metadata?: Metadata;
  filterByMetadata?: Metadata;
};

/** The typed upload input as its form fields. */
export function uploadFields<T extends { file: Blob | Uint8Array; filename?: string; metadata?: Metadata }>(
  input: T,
): Omit<T, "file" | "filename" | "metadata"> & { file: File; metadata?: string } {
  const { file, filename, metadata, ...rest } = input;
  const name = filename ?? (file instanceof File ? file.name : "file");
  const type = file instanceof Blob ? file.type : "";
  return {
    ...rest,
    file:
      file instanceof File && filename === undefined ? file : new File([file as BlobPart], name, { type }),
    ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) } : {}),
  };
}

export class NamespaceClient {
  readonly namespace: string;
  readonly #core: RequestCore;

  constructor(core: RequestCore, namespace: string) {
    const ok = Namespace.safeParse(namespace);
    if (!ok.success) throw new InvalidRequestError("namespace", ok.error.issues);
    this.#core = core;
    this.namespace = namespace;
  }

  get #ns() {
    return { namespace: this.namespace };
  }

  readonly documents = {
    add: (input: AddDocumentInput, opts?: RequestOptions) => {
      const { dreaming, taskType, ...body } = input;
      const query: QueryOf<"addDocument"> = {};
      if (dreaming !== undefined) query.dreaming = dreaming;
      if (taskType !== undefined) query.taskType = taskType;
      return this.#core.request("addDocument", { params: this.#ns, query, body }, opts);
    },
    /** Uploads a file (at most 50 MB); its text is read in the background, as for add. */
    addFile: (input: AddDocumentFileInput, opts?: RequestOptions) => {
      const { filterByMetadata, ...rest } = input;
      const body = {
        ...uploadFields(rest),
        ...(filterByMetadata !== undefined ? { filterByMetadata: JSON.stringify(filterByMetadata) } : {}),
      };
      return this.#core.request("addDocumentFile", { params: this.#ns, body }, opts);
    },
    get: (id: string, query?: QueryOf<"getDocument">, opts?: RequestOptions) =>
      this.#core.request("getDocument", { params: { ...this.#ns, id }, query }, opts),
    list: (query?: QueryOf<"list">, body?: BodyOf<"list">, opts?: RequestOptions) =>
      this.#core.request("list", { params: { ...this.#ns, type: "documents" }, query, body }, opts),
    delete: (ids: string[], opts?: RequestOptions) =>
      this.#core.request("deleteDocuments", { params: this.#ns, body: { ids } }, opts),
    /** Polls until indexed (or memories done); a failed document throws DocumentFailedError. */
    waitFor: (id: string, opts?: WaitForOptions) =>
      waitForDocument((signal) => this.documents.get(id, undefined, { signal }), id, opts),
  };

  readonly chunks = {
    list: (query?: QueryOf<"list">, body?: BodyOf<"list">, opts?: RequestOptions) =>
      this.#core.request("list", { params: { ...this.#ns, type: "chunks" }, query, body }, opts),
  };

  readonly memories = {
    list: (query?: QueryOf<"list">, body?: BodyOf<"list">, opts?: RequestOptions) =>
      this.#core.request("list", { params: { ...this.#ns, type: "memories" }, query, body }, opts),
    get: (id: string, query?: QueryOf<"getMemory">, opts?: RequestOptions) =>
      this.#core.request("getMemory", { params: { ...this.#ns, id }, query }, opts),
    forget: (ids: string[], opts?: RequestOptions) =>
      this.#core.request("forgetMemories", { params: this.#ns, body: { ids } }, opts),
    /** With `dryRun: true` the matches come back and nothing is forgotten. */
    forgetSemantic: (body: BodyOf<"forgetSemantic">, opts?: RequestOptions) =>
      this.#core.request("forgetSemantic", { params: this.#ns, body }, opts),
  };

  search(body: BodyOf<"search">, opts?: RequestOptions) {
    return this.#core.request("search", { params: this.#ns, body }, opts);
  }

  readonly profile = {
    get: (body?: BodyOf<"getProfile">, opts?: RequestOptions) =>
      this.#core.request("getProfile", { params: this.#ns, body }, opts),
    buckets: {
      get: (opts?: RequestOptions) => this.#core.request("getBuckets", { params: this.#ns }, opts),
      /** Adds or updates these buckets (name -> description); others stay as they are. */
      put: (buckets: Record<string, string>, opts?: RequestOptions) =>
        this.#core.request("putBuckets", { params: this.#ns, body: { buckets } }, opts),
      delete: (names: string[], opts?: RequestOptions) =>
        this.#core.request("deleteBuckets", { params: this.#ns, body: { buckets: names } }, opts),
    },
  };

  /** The namespace record: supportingContext and counts. */
  get(opts?: RequestOptions) {
    return this.#core.request("getNamespace", { params: this.#ns }, opts);
  }

  update(body: BodyOf<"patchNamespace">, opts?: RequestOptions) {
    return this.#core.request("patchNamespace", { params: this.#ns, body }, opts);
  }

  /** Deletes the namespace and its content; with `moveTo` the content moves there first. Answers 202. */
  delete(query?: QueryOf<"deleteNamespace">, opts?: RequestOptions) {
    return this.#core.request("deleteNamespace", { params: this.#ns, query }, opts);
  }

  readonly connectors = {
    create: (body: BodyOf<"createConnector">, opts?: RequestOptions) =>
      this.#core.request("createConnector", { params: this.#ns, body }, opts),
    list: (opts?: RequestOptions) => this.#core.request("listConnectors", { params: this.#ns }, opts),
    get: (id: string, query?: QueryOf<"getConnector">, opts?: RequestOptions) =>
      this.#core.request("getConnector", { params: { ...this.#ns, id }, query }, opts),
    update: (id: string, body: BodyOf<"patchConnector">, opts?: RequestOptions) =>
      this.#core.request("patchConnector", { params: { ...this.#ns, id }, body }, opts),
    /** Starts a sync now (202); ConflictError while one is running. */
    sync: (id: string, opts?: RequestOptions) =>
      this.#core.request("syncConnector", { params: { ...this.#ns, id } }, opts),
    delete: (id: string, query?: QueryOf<"deleteConnector">, opts?: RequestOptions) =>
      this.#core.request("deleteConnector", { params: { ...this.#ns, id }, query }, opts),
  };
}
