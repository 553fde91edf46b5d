import { SERVER_SETTING_MISSING } from "../api/errors.js";

/**
 * What went wrong, in the engine's own words: raised where it is found (route helper, service),
 * and given an HTTP status in one place only, app.ts's `onError`. Nothing below app.ts knows HTTP.
 * Anything thrown that is not a DomainError is a bug: 500 with a generic message, stack to the log.
 */
export abstract class DomainError extends Error {
  constructor(
    /** A short title: the ErrorResponse's `error`. */
    readonly title: string,
    /** What exactly, and what to do: the ErrorResponse's `details`. */
    readonly details?: string,
  ) {
    super(details ? `${title}: ${details}` : title);
    this.name = new.target.name;
  }
}

/**
 * Bad input the caller can fix: names the field and the rule it broke. `field` is undefined when
 * `rule` already names several fields (a request's schema issues, joined).
 */
export class InputError extends DomainError {
  constructor(
    readonly field: string | undefined,
    readonly rule: string,
    title = "Invalid request",
  ) {
    super(title, field === undefined ? rule : `${field}: ${rule}`);
  }
}

/** The request body is over its byte limit. */
export class TooLargeError extends DomainError {}

/** No API key, or one that is unknown or revoked. */
export class UnauthenticatedError extends DomainError {}

/** The caller is known but this key may not do it (another namespace, an organization-wide change). */
export class ForbiddenError extends DomainError {}

/** The thing does not exist, or not for this caller (another organization's or namespace's looks the same). */
export class NotFoundError extends DomainError {
  constructor(readonly what: string) {
    super(`${what} not found`);
  }
}

/** The request collides with the current state (a sync already queued or running). */
export class ConflictError extends DomainError {}

/**
 * A setting of the engine's operator is missing or wrong (an OAuth app's client id): the caller
 * cannot fix it in the request; `setting` names what the operator sets.
 */
export class ConfigurationError extends DomainError {
  constructor(
    readonly setting: string,
    rule: string,
  ) {
    super(SERVER_SETTING_MISSING, `${rule}; the engine's operator must set ${setting}`);
  }
}

/** The disk (or the database's page limit) is full: nothing was written; retryable once space is freed. */
export class StorageFullError extends DomainError {
  constructor(
    title = "Disk full",
    details = "the engine's disk is full, so nothing was written; free space on it and send the request again",
  ) {
    super(title, details);
  }
}

/** The key made more requests than the engine's rate limit allows: try again after `retryAfterSeconds`. */
export class RateLimitedError extends DomainError {
  constructor(
    readonly retryAfterSeconds: number,
    details: string,
  ) {
    super("Rate limit exceeded", details);
  }
}

/**
 * The database cannot serve the request now (restarting, unreachable, a statement held past its
 * time limit): nothing was written; the same request succeeds once it is back.
 */
export class UnavailableError extends DomainError {
  constructor(
    readonly retryAfterSeconds: number,
    details: string,
  ) {
    super("Service unavailable", details);
  }
}

/** The write would take the organization over its document token quota: nothing was written. */
export class QuotaExceededError extends DomainError {}
