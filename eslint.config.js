// ESLint over every TypeScript file, tests included (npm run lint; npm test runs it after the format
// check). Prettier owns the layout, this config the rest: typescript-eslint's type-aware rules, the
// React hooks rules for the pages' code, and one import order (simple-import-sort, fixed by --fix).
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import simpleImportSort from "eslint-plugin-simple-import-sort";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    // Built or generated output, and the few plain-JS files (the service worker, the test plugin,
    // the fake Open WebUI page, build configs): they run outside the TypeScript program.
    ignores: [".next/", "node_modules/", "data/", "bench/", "test-results/", "**/*.js", "**/*.mjs"],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    plugins: { "simple-import-sort": simpleImportSort },
    rules: {
      // One block, in the plugin's order (packages, then relative paths), without blank lines.
      "simple-import-sort/imports": [
        "error",
        { groups: [["^\\u0000", "^node:", "^@?\\w", "^", "^\\."]] },
      ],
      "simple-import-sort/exports": "error",
      // A promise is awaited or caught where it is made; a handler that returns one is only
      // allowed where the caller is known to ignore it (React's event props, a listener).
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      // The SQLite and in-memory stores implement the async store interfaces synchronously: an
      // async method turns what they throw into a rejection, which every caller handles.
      "@typescript-eslint/require-await": "off",
      // Display text and the Gateway's output are cleaned of control characters on purpose.
      "no-control-regex": "off",
      // A wrapped error says what failed in its own words; its cause could carry what the message
      // leaves out on purpose (a Redis URL's password), and nothing here reads causes.
      "preserve-caught-error": "off",
      // A variable assigned once but read first by a closure (a signal handler set up before the
      // start it stops) must stay a let.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ["components/**/*.tsx", "components/**/*.ts", "client/**/*.ts", "app/**/*.tsx"],
    ...reactHooks.configs.flat["recommended-latest"],
  },
  {
    files: ["components/**/*.tsx", "components/**/*.ts", "client/**/*.ts", "app/**/*.tsx"],
    rules: {
      // The pages render on the server first: what only the browser knows (the token in the address,
      // Notification support, storage, the asks still pending) is set in an effect after hydration.
      "react-hooks/set-state-in-effect": "off",
    },
  },
  {
    files: ["**/*.test.ts", "**/*.test.tsx", "test/**/*.ts"],
    rules: {
      // vitest's expect(mock.method) and the fake Gateway's handlers pass methods unbound on purpose.
      "@typescript-eslint/unbound-method": "off",
      // Tests read replies, frames and JSON bodies as they come off the wire and assert on them
      // with expect, which is the check: typing each reply first would only restate the assertion.
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
);
