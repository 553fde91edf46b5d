/**
 * How a test waits: for a condition, never for a stretch of time. A busy CI machine runs
 * everything slower than a quiet one, so every wait has the same generous bound and polls often;
 * on a quiet machine it returns as soon as the condition holds.
 */

/** The longest any test waits for a condition (and a test's own timeout, in vitest.config.ts). */
export const WAIT_MS = 90_000;
const POLL_MS = 20;

/**
 * Reads until `ok` holds of what is read and returns that value; fails after WAIT_MS naming
 * `what` and the last value read.
 */
export async function until<T>(
  read: () => T | Promise<T>,
  ok: (v: T) => boolean = (v) => Boolean(v),
  what = "a condition",
): Promise<T> {
  const end = Date.now() + WAIT_MS;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last value ${show(v)}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function show(v: unknown): string {
  try {
    return JSON.stringify(v)?.slice(0, 500) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Reads until `check` gives a value (anything but undefined) and returns it. */
export const eventually = <T>(check: () => Promise<T | undefined>, what: string): Promise<T> =>
  until(check, (v): v is T => v !== undefined, what) as Promise<T>;
