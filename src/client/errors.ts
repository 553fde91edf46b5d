/**
 * One error hierarchy for every way a call can fail: keyed by HTTP status for answers, plus
 * connection, timeout, abort, bad input (never sent) and the polling helper's outcomes.
 * `instanceof MemoryApiError` catches all of them.
 */
import type { z } from "zod";
import { describeIssues, ErrorResponse } from "../api/index.js";

export class MemoryApiError extends Error {
  /** The HTTP status; undefined when no answer came (connection, timeout, abort, bad input). */
  readonly status: number | undefined;
  /** The ErrorResponse body, when the server sent one. */
  readonly body: ErrorResponse | undefined;
  readonly headers: Headers | undefined;

  constructor(
    message: string,
    init: { status?: number; body?: ErrorResponse; headers?: Headers; cause?: unknown } = {},
  ) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.body = init.body;
    this.headers = init.headers;
  }
}

export class BadRequestError extends MemoryApiError {}
export class AuthenticationError extends MemoryApiError {}
export class PaymentRequiredError extends MemoryApiError {}
export class PermissionDeniedError extends MemoryApiError {}
export class NotFoundError extends MemoryApiError {}
export class ConflictError extends MemoryApiError {}
export class PayloadTooLargeError extends MemoryApiError {}
export class UnprocessableEntityError extends MemoryApiError {}
export class RateLimitError extends MemoryApiError {}
/** Any 5xx. */
export class InternalServerError extends MemoryApiError {}

/** No answer: refused, reset, DNS, TLS. */
export class APIConnectionError extends MemoryApiError {}
/** An attempt outlived `timeoutMs`. A connection error, so retried where the request is safe to repeat. */
export class APITimeoutError extends APIConnectionError {}
/** The caller's AbortSignal fired; never retried. */
export class APIUserAbortError extends MemoryApiError {}

/** The input breaks the contract; thrown before anything is sent. The message names field and rule. */
export class InvalidRequestError extends MemoryApiError {
  readonly issues: readonly z.core.$ZodIssue[];
  constructor(where: string, issues: readonly z.core.$ZodIssue[]) {
    super(describeIssues(where, issues));
    this.issues = issues;
  }
}

/** A 2xx whose body does not match the contract's response schema. */
export class InvalidResponseError extends MemoryApiError {}

/** `waitFor` reached its timeout before the document got there; carries the last state seen. */
export class WaitTimeoutError extends MemoryApiError {
  constructor(
    message: string,
    readonly lastState: { status: string; dreamingStatus: string } | undefined,
  ) {
    super(message);
  }
}

/** `waitFor` saw the document's processing fail (`system.status: failed`). */
export class DocumentFailedError extends MemoryApiError {
  constructor(
    message: string,
    readonly document: { id: string; error?: string | null; [k: string]: unknown },
  ) {
    super(message);
  }
}

const byStatus: Record<number, typeof MemoryApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** The error for a non-2xx answer; `text` is the raw body (JSON ErrorResponse or anything else). */
export function errorFromResponse(
  status: number,
  statusText: string,
  headers: Headers,
  text: string,
): MemoryApiError {
  const Class = byStatus[status] ?? (status >= 500 ? InternalServerError : MemoryApiError);
  let body: ErrorResponse | undefined;
  try {
    const parsed = ErrorResponse.safeParse(JSON.parse(text));
    if (parsed.success) body = parsed.data;
  } catch {
    // not JSON: the text itself makes the message
  }
  let message: string;
  if (body) message = `${status} ${body.error}${body.details ? `: ${body.details}` : ""}`;
  else {
    const snippet = text.replace(/\s+/g, " ").trim().slice(0, 300);
    message = `${status} ${statusText || "error"}${snippet ? `: ${snippet}` : ""}`;
  }
  return new Class(message, { status, ...(body ? { body } : {}), headers });
}
