import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["{lib,server,components,test}/**/*.test.{ts,tsx}"],
    globalSetup: ["test/setup/global-gateway.ts"],
    pool: "forks",
    // Two cores: real Gateway, server and browser tests would starve each other if run wide.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
