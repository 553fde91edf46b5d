import type { Context, Hono } from "hono";
import type { z } from "zod";
import { type Endpoint, writes } from "../../api/endpoints.js";
import { describeIssues, READ_ONLY_KEY } from "../../api/errors.js";
import { REQUEST_BODY_MAX_BYTES } from "../../api/limits.js";
import { findUnstorableText, INVALID_TEXT_RULE } from "../../api/text.js";
import type { EngineContext } from "../context.js";
import { growsStore } from "../disk-reserve.js";
import { ForbiddenError, InputError, TooLargeError } from "../errors.js";
import { findNamespace, type NamespaceRow } from "../services/namespaces.js";
import type { OrganizationRow, Principal } from "../store/organizations.js";
import { jsonResponse } from "./json.js";
import { FILE_PART, readUpload, type UploadedFile } from "./multipart.js";
import { discardRest } from "./refused-body.js";

export type EngineEnv = { Variables: { principal: Principal } };
export type EngineApp = Hono<EngineEnv>;
export type EngineRoutes = (app: EngineApp, ctx: EngineContext) => void;

type Out<S> = [NonNullable<S>] extends [z.ZodType] ? z.output<NonNullable<S>> : undefined;
/** A request parsed by its endpoint's schemas. */
export interface Input<E extends Endpoint> {
  params: Out<E["params"]>;
  query: Out<E["query"]>;
  body: Out<E["body"]>;
  /** A multipart endpoint's file part (its text fields are `body`). */
  upload?: UploadedFile;
}

/** The endpoint's namespace as `N` when its path has a `{namespace}`, else nothing. */
type NamespaceOf<E extends Endpoint, N> = Out<E["params"]> extends { namespace: string } ? N : undefined;

/** What a handler gets: the parsed request, who asks, and the namespace resolved once for it. */
export interface RouteRequest<E extends Endpoint, N> extends Input<E> {
  principal: Principal;
  organization: OrganizationRow;
  namespace: NamespaceOf<E, N>;
  /** Aborted when the caller goes away. */
  signal: AbortSignal;
}

/** `/ns/{namespace}/document/{id}` -> `/ns/:namespace/document/:id` */
const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

/**
 * Registers the handler of one endpoint of the contract: the request's params, query and body are
 * parsed with the endpoint's own schemas (400 naming field and rule), the key's namespace
 * allow-list is enforced (403), and a returned value is sent as JSON with the endpoint's status.
 * A `{namespace}` of the path is looked up, never created: one never written to is `null` (a read
 * of it finds nothing; it is not an error).
 */
export function route<E extends Endpoint>(
  app: EngineApp,
  ctx: EngineContext,
  endpoint: E,
  handler: (request: RouteRequest<E, NamespaceRow | null>) => unknown,
  path: string = endpoint.path,
): void {
  const grows = growsStore(endpoint);
  on(app, endpoint, path, async (c) => {
    // Before the body is read: an upload refused for want of space is not written to disk first.
    if (grows) await ctx.disk?.assertRoom(declaredBytes(c));
    const input = await parseRequest(c, endpoint, ctx.dataDir);
    const request = await scoped(
      c,
      input,
      async (org, name) => (await findNamespace(ctx.db, org, name)) ?? null,
    );
    return send(c, endpoint, await handler(request as RouteRequest<E, NamespaceRow | null>));
  });
}

/**
 * Like `route`, for writes that bring their namespace into being: the namespace is not looked up
 * here but handed to the handler by name, for its service to make in the write's own transaction
 * (services/: a refused write creates nothing, and the service says which locks it needs).
 */
export function creatingRoute<E extends Endpoint>(
  app: EngineApp,
  ctx: EngineContext,
  endpoint: E,
  handler: (request: RouteRequest<E, string>) => unknown,
): void {
  const grows = growsStore(endpoint);
  on(app, endpoint, endpoint.path, async (c) => {
    if (grows) await ctx.disk?.assertRoom(declaredBytes(c));
    const input = await parseRequest(c, endpoint, ctx.dataDir);
    const request = await scoped(c, input, async (_org, name) => name);
    return send(c, endpoint, await handler(request as RouteRequest<E, string>));
  });
}

/** The body's declared size: what a write brings, for the disk reserve (0 when undeclared). */
const declaredBytes = (c: Context) => {
  const n = Number(c.req.header("content-length") ?? "0");
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/**
 * Registers an endpoint's handler behind the one check every route shares: a read-only key may
 * call only endpoints that do not write (the contract says which: `writes`), refused before the
 * body is read, so a refused request changes nothing.
 */
function on(
  app: EngineApp,
  endpoint: Endpoint,
  path: string,
  handler: (c: Context<EngineEnv>) => Promise<Response>,
): void {
  const writing = writes(endpoint);
  app.on(endpoint.method, honoPath(path), (c) => {
    if (writing && c.get("principal").readOnly) {
      throw new ForbiddenError(
        READ_ONLY_KEY,
        `this API key may only read, and ${endpoint.method} ${endpoint.path} writes: use a key made without --read-only`,
      );
    }
    return handler(c);
  });
}

type Lookup = (organizationId: string, name: string) => Promise<NamespaceRow | string | null>;

/** The request with its principal, organization and (allowed) namespace. */
async function scoped<E extends Endpoint>(c: Context<EngineEnv>, input: Input<E>, lookup: Lookup) {
  const principal = c.get("principal");
  const name = (input.params as { namespace?: string } | undefined)?.namespace;
  if (name !== undefined) assertNamespaceAllowed(principal, name);
  return {
    ...input,
    principal,
    organization: principal.organization,
    namespace: name === undefined ? undefined : await lookup(principal.organization.id, name),
    signal: c.req.raw.signal,
  };
}

function send(_c: Context<EngineEnv>, endpoint: Endpoint, out: unknown): Response {
  if (out instanceof Response) return out;
  return jsonResponse(out, endpoint.status ?? 200);
}

/** The contract's pagination of a list answer. */
export const pagination = (page: number, limit: number, total: number) => ({
  currentPage: page,
  totalPages: Math.ceil(total / limit),
  totalItems: total,
  limit,
});

export function assertNamespaceAllowed(principal: Principal, namespace: string): void {
  if (principal.namespaces && !principal.namespaces.includes(namespace)) {
    throw new ForbiddenError("Namespace not allowed", `this API key may not use namespace '${namespace}'`);
  }
}

/** Parses params, query and body of a request with the endpoint's schemas; throws a 400 naming each issue. */
export async function parseRequest<E extends Endpoint>(
  c: Context,
  endpoint: E,
  dataDir: string,
): Promise<Input<E>> {
  const issues: string[] = [];
  const parse = (where: string, schema: z.ZodType | undefined, value: unknown) => {
    if (!schema) return undefined;
    const r = schema.safeParse(value);
    if (r.success) return r.data;
    issues.push(describeIssues(where, r.error.issues));
    return undefined;
  };
  const params = parse("params", endpoint.params, c.req.param());
  const query = parse("query", endpoint.query, queryObject(new URL(c.req.url)));
  let body: unknown;
  let upload: UploadedFile | undefined;
  if (endpoint.body && endpoint.bodyType === "multipart") {
    // Parsed only once params and query are known good: an upload is large.
    if (issues.length) throw new InputError(undefined, issues.join("; "));
    const form = await readUpload(c.req.raw, dataDir);
    body = parse("body", endpoint.body, form.fields);
    upload = form.file;
    if (!upload) issues.push(`${FILE_PART}: required: send the file in a part named '${FILE_PART}'`);
  } else if (endpoint.body) {
    let raw: unknown;
    try {
      raw = await readJsonBody(c.req.raw);
    } catch (err) {
      // Malformed JSON joins the other issues; a body too large stops here.
      if (!(err instanceof InputError && issues.length)) throw err;
      issues.push(err.details ?? err.message);
    }
    if (raw !== undefined) body = parse("body", endpoint.body, raw);
  }
  if (issues.length) throw new InputError(undefined, issues.join("; "));
  for (const [where, value] of [
    ["params", params],
    ["query", query],
    ["body", body],
    ["file", upload && { name: upload.name, mimeType: upload.mimeType }],
  ] as const) {
    const at = findUnstorableText(value);
    if (!at) continue;
    const field = at.length === 0 ? where : `${where === "body" ? "" : `${where}.`}${at.join(".")}`;
    throw new InputError(field, INVALID_TEXT_RULE);
  }
  return { params, query, body, ...(upload ? { upload } : {}) } as Input<E>;
}

/** Query parameters as an object; a repeated parameter becomes an array. */
export function queryObject(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    out[key] = all.length === 1 ? all[0]! : all;
  }
  return out;
}

export const tooLarge = () =>
  new TooLargeError("Request body too large", `the body must be at most ${REQUEST_BODY_MAX_BYTES} bytes`);

/**
 * The JSON body, read with a byte limit (Content-Length may be absent or lie, so the stream is
 * counted too). An empty body reads as `{}`: the schema then names what is missing.
 */
export async function readJsonBody(req: Request, maxBytes = REQUEST_BODY_MAX_BYTES): Promise<unknown> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  // Refused before it is read (the error handler drops what it can of it).
  if (declared > maxBytes) throw tooLarge();
  if (!req.body) return {};
  const reader = req.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      parts.length = 0;
      await discardRest(reader);
      throw tooLarge();
    }
    parts.push(value);
  }
  const text = Buffer.concat(parts).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError(
      "body",
      `not valid JSON (${err instanceof Error ? err.message : String(err)})`,
      "Malformed JSON body",
    );
  }
}
