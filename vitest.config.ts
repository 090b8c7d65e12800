import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    pool: "forks",
    // Two cores: real Gateway, server and browser tests would starve each other if run wide.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        // The lint scripts' own tests (test/lint/) need no Gateway.
        test: {
          name: "unit",
          include: ["{lib,server,components}/**/*.test.{ts,tsx}", "test/lint/**/*.test.ts"],
        },
      },
      {
        extends: true,
        // Everything under test/ runs against one real OpenClaw Gateway started once for the run.
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/lint/**"],
          globalSetup: ["test/setup/global-gateway.ts"],
        },
      },
    ],
  },
});
