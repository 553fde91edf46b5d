import { defineConfig } from "vitest/config";

/**
 * One timeout for every test and hook, generous: a busy 2-core CI machine runs several times
 * slower than a quiet one, and a test states what must happen, not how fast (speed is for bench/).
 * Tests wait for conditions with test/support/wait.ts, whose bound (WAIT_MS) is below this one.
 */
const TEST_TIMEOUT_MS = 300_000;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // MEMCTX_TEST_DATABASE_URL: the same tests against PostgreSQL (test/postgres-setup.ts); each
    // file's changes to the environment undone after it (test/support/setup.ts).
    setupFiles: ["./test/postgres-setup.ts", "./test/support/setup.ts"],
    // ...and drops the schemas those tests made once the run ends.
    globalSetup: ["./test/postgres-global.ts"],
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: TEST_TIMEOUT_MS,
    // Two cores: e2e tests start child processes and servers; keep the pool small.
    maxWorkers: 2,
    // Files share a worker instead of starting one each (about a second of start-up per file):
    // they leave no state behind (servers, engines and temp directories are closed per file, the
    // environment is restored by the setup file above).
    isolate: false,
    reporters: ["default", "./test/summary-reporter.ts"],
  },
});
