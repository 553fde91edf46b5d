import { afterAll, beforeAll } from "vitest";

/**
 * A fixture made once before a file's (or describe block's) tests and closed after the last one:
 * `const server = perFile(start, (s) => s.close())` at the top of a file. What it returns stands
 * for the fixture from the start; each property is read from the real one when used, which is
 * inside tests and later hooks (beforeAll hooks run in the order they were declared).
 */
export function perFile<T extends object>(make: () => Promise<T> | T, close?: (made: T) => unknown): T {
  let made: T | undefined;
  beforeAll(async () => {
    made = await make();
  });
  afterAll(async () => {
    if (made !== undefined) await close?.(made);
  });
  const real = (): T => {
    if (made === undefined) throw new Error("a per-file fixture is made by beforeAll: use it inside tests");
    return made;
  };
  return new Proxy({} as T, {
    get(_, property) {
      const value = Reflect.get(real(), property, real());
      // Methods run on the real object (its private fields, its `this`).
      return typeof value === "function" ? value.bind(real()) : value;
    },
    set: (_, property, value) => Reflect.set(real(), property, value, real()),
  });
}
