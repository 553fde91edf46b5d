import { InputError } from "../errors.js";

/** Readers for provider config and selection objects; each error names the field and the rule. */

export function asObject(value: unknown, where: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InputError(where, "must be an object");
  }
  return value as Record<string, unknown>;
}

export function requiredString(obj: Record<string, unknown>, key: string, where = "config"): string {
  const value = obj[key];
  if (typeof value !== "string" || value.trim() === "") {
    throw new InputError(`${where}.${key}`, "is required and must be a non-empty string");
  }
  return value.trim();
}

export function optionalString(
  obj: Record<string, unknown>,
  key: string,
  where = "config",
): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new InputError(`${where}.${key}`, "must be a string");
  return value;
}

export function optionalBoolean(
  obj: Record<string, unknown>,
  key: string,
  where = "config",
): boolean | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new InputError(`${where}.${key}`, "must be true or false");
  return value;
}

export function optionalStringArray(
  obj: Record<string, unknown> | null,
  key: string,
  where = "selection",
): string[] | undefined {
  const value = obj?.[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw new InputError(`${where}.${key}`, "must be an array of strings");
  }
  return value as string[];
}

/** An absolute http(s) URL without a trailing slash (a base URL for an API). */
export function httpUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InputError(field, "must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InputError(field, "must be an http or https URL");
  }
  return url.href.replace(/\/+$/, "");
}

/** The API base: `config.apiUrl` when given (tests, self-hosted), else the provider's default. */
export function apiBase(config: Record<string, unknown>, fallback: string): string {
  const given = optionalString(config, "apiUrl");
  return given ? httpUrl(given, "config.apiUrl") : fallback;
}

/** validateConfig of a provider whose only setting is an optional `config.apiUrl`. */
export const apiUrlConfig =
  (fallback: string) =>
  (config: unknown): Record<string, unknown> => {
    const obj = asObject(config, "config");
    apiBase(obj, fallback);
    return obj;
  };

const SECRET_KEY = /secret|token|password|apikey|api_key|credential/i;

/** The config as shown to API callers: secrets (keys, tokens, passwords) are never echoed back. */
export function redactConfig(config: Record<string, unknown> | null): Record<string, unknown> | null {
  if (config === null) return null;
  return Object.fromEntries(
    Object.entries(config).map(([key, value]) => [key, SECRET_KEY.test(key) && value ? "[redacted]" : value]),
  );
}
