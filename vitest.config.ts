import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // MEMCTX_TEST_DATABASE_URL: the same tests against PostgreSQL (test/postgres-setup.ts).
    setupFiles: ["./test/postgres-setup.ts"],
    // ...and drops the schemas those tests made once the run ends.
    globalSetup: ["./test/postgres-global.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: e2e tests start child processes and servers; keep the pool small.
    maxWorkers: 2,
    reporters: ["default", "./test/summary-reporter.ts"],
  },
});
