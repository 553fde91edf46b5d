import type { Context, Hono } from "hono";
import type { z } from "zod";
import type { Endpoint } from "../../api/endpoints.js";
import { describeIssues } from "../../api/errors.js";
import { REQUEST_BODY_MAX_BYTES } from "../../api/limits.js";
import type { EngineContext } from "../context.js";
import { HttpError } from "../errors.js";
import type { Principal } from "../store/organizations.js";

export type EngineEnv = { Variables: { principal: Principal } };
export type EngineApp = Hono<EngineEnv>;
export type EngineRoutes = (app: EngineApp, ctx: EngineContext) => void;

type Out<S> = [NonNullable<S>] extends [z.ZodType] ? z.output<NonNullable<S>> : undefined;
/** A request parsed by its endpoint's schemas. */
export interface Input<E extends Endpoint> {
  params: Out<E["params"]>;
  query: Out<E["query"]>;
  body: Out<E["body"]>;
}

/** `/ns/{namespace}/document/{id}` -> `/ns/:namespace/document/:id` */
const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

/**
 * Registers the handler of one endpoint of the contract: the request's params, query and body are
 * parsed with the endpoint's own schemas (400 naming field and rule), the key's namespace
 * allow-list is enforced (403), and a returned value is sent as JSON with the endpoint's status.
 */
export function route<E extends Endpoint>(
  app: EngineApp,
  endpoint: E,
  handler: (input: Input<E>, c: Context<EngineEnv>) => unknown,
  path: string = endpoint.path,
): void {
  app.on(endpoint.method, honoPath(path), async (c) => {
    const input = await parseRequest(c, endpoint);
    const ns = (input.params as { namespace?: string }).namespace;
    if (ns !== undefined) assertNamespaceAllowed(c.get("principal"), ns);
    const out = await handler(input, c);
    if (out instanceof Response) return out;
    return c.json(out as object, endpoint.status ?? 200);
  });
}

export function assertNamespaceAllowed(principal: Principal, namespace: string): void {
  if (principal.namespaces && !principal.namespaces.includes(namespace)) {
    throw new HttpError(403, "Namespace not allowed", `this API key may not use namespace '${namespace}'`);
  }
}

/** Parses params, query and body of a request with the endpoint's schemas; throws a 400 naming each issue. */
export async function parseRequest<E extends Endpoint>(c: Context, endpoint: E): Promise<Input<E>> {
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
  if (endpoint.body) {
    let raw: unknown;
    try {
      raw = await readJsonBody(c.req.raw);
    } catch (err) {
      // Malformed JSON joins the other issues; a body too large stops here.
      if (!(err instanceof HttpError && err.status === 400 && issues.length)) throw err;
      issues.push(err.details ?? err.message);
    }
    if (raw !== undefined) body = parse("body", endpoint.body, raw);
  }
  if (issues.length) throw new HttpError(400, "Invalid request", issues.join("; "));
  return { params, query, body } as Input<E>;
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
  new HttpError(413, "Request body too large", `the body must be at most ${REQUEST_BODY_MAX_BYTES} bytes`);

/**
 * The JSON body, read with a byte limit (Content-Length may be absent or lie, so the stream is
 * counted too). An empty body reads as `{}`: the schema then names what is missing.
 */
export async function readJsonBody(req: Request, maxBytes = REQUEST_BODY_MAX_BYTES): Promise<unknown> {
  const declared = Number(req.headers.get("content-length") ?? "0");
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
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    parts.push(value);
  }
  const text = Buffer.concat(parts).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError(
      400,
      "Malformed JSON body",
      `body: not valid JSON (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}
