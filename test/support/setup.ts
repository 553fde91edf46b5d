/**
 * Runs before each test file. Test files share worker processes (vitest.config.ts: isolate off),
 * so what one file sets in the environment (a limit, a timeout) is put back once it is done, and
 * the next file starts from the same environment.
 */
import { afterAll } from "vitest";

const saved = { ...process.env };
afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
});
