import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: e2e tests start child processes and servers; keep the pool small.
    maxWorkers: 2,
    reporters: ["default", "./test/summary-reporter.ts"],
  },
});
