/**
 * The v5 API of this same origin, called with the user's key. Nothing here knows the engine: the
 * page is one more API client, so keys and namespace restrictions hold as for any other.
 */

export class ApiError extends Error {
  /** @param {number} status @param {string} message @param {string | undefined} details */
  constructor(status, message, details) {
    super(details ? `${message}: ${details}` : message);
    this.status = status;
  }
}

const enc = encodeURIComponent;

/** @param {() => string | null} getKey */
export function createApi(getKey) {
  async function call(method, path, body) {
    const headers = { accept: "application/json" };
    const key = getKey();
    if (key) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: "omit",
        cache: "no-store",
      });
    } catch (err) {
      throw new ApiError(0, "The server did not answer", String(err?.message ?? err));
    }
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) {
      throw new ApiError(res.status, data?.error ?? `HTTP ${res.status}`, data?.details);
    }
    return data;
  }
  const ns = (namespace) => `/ns/${enc(namespace)}`;
  return {
    namespaces: () => call("GET", "/namespaces?limit=100"),
    namespace: (n) => call("GET", ns(n)),
    setSupportingContext: (n, supportingContext) => call("PATCH", ns(n), { supportingContext }),
    profile: (n) => call("POST", `${ns(n)}/profile`, {}),
    listMemories: (n, page, forgotten, { documentId = "", limit = 20 } = {}) =>
      call("POST", `${ns(n)}/list/memories?page=${page}&limit=${limit}`, {
        include: { forgotten },
        ...(documentId ? { filter: { field: "documentId", operator: "eq", value: documentId } } : {}),
      }),
    memory: (n, id) => call("GET", `${ns(n)}/memories/${enc(id)}?include=related,documents&relatedLimit=20`),
    forget: (n, ids) => call("DELETE", `${ns(n)}/memories`, { ids }),
    /**
     * v5 has no memory write: a correction is legacy v4's PATCH, which keeps the old text as the
     * earlier version (the namespace is v4's containerTag).
     */
    updateMemory: (n, id, newContent) => call("PATCH", "/v4/memories", { containerTag: n, id, newContent }),
    /**
     * No API un-forgets a memory: its text is written again as a new memory (v4 POST), with its
     * kind and metadata. The forgotten one stays forgotten, its source sentence out of search.
     */
    restoreMemory: (n, m) =>
      call("POST", "/v4/memories", {
        containerTag: n,
        memories: [
          {
            content: m.memory,
            ...(typeof m.isStatic === "boolean" ? { isStatic: m.isStatic } : {}),
            ...(m.metadata && Object.keys(m.metadata).length ? { metadata: m.metadata } : {}),
          },
        ],
      }),
    forgetByMeaning: (n, query, dryRun) => call("DELETE", `${ns(n)}/memories/semantic`, { query, dryRun }),
    listDocuments: (n, page, limit = 20) =>
      call("POST", `${ns(n)}/list/documents?page=${page}&limit=${limit}`, {}),
    document: (n, id) => call("GET", `${ns(n)}/document/${enc(id)}?include=chunks,memories`),
    deleteDocument: (n, id) => call("DELETE", `${ns(n)}/document`, { ids: [id] }),
    addNote: (n, content) => call("POST", `${ns(n)}/document`, { content, dreaming: "instant" }),
    search: (n, body) => call("POST", `${ns(n)}/search`, body),
    connectors: (n) => call("GET", `${ns(n)}/connectors`),
    syncConnector: (n, id) => call("POST", `${ns(n)}/connectors/${enc(id)}/sync`),
    /** memctx ui's one-time token for the key; not part of the v5 API, served by memctx ui only. */
    exchangeToken: (token) => call("POST", "/ui/session", { token }),
  };
}
