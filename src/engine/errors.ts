/**
 * An error that becomes an HTTP answer with an ErrorResponse body. Anything else thrown in a route
 * is a bug: it answers 500 with a generic message and its stack goes to the log.
 */
export class HttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 507,
    message: string,
    readonly details?: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export const badRequest = (details: string) => new HttpError(400, "Invalid request", details);
export const notFound = (what: string) => new HttpError(404, `${what} not found`);

/** The disk (or the database's page limit) is full: 507 Insufficient Storage, retryable once space is freed. */
export const diskFull = () =>
  new HttpError(
    507,
    "Disk full",
    "the engine's disk is full, so nothing was written; free space on it and send the request again",
  );
