/** The valves `npm run connect-openwebui` sets; every other one is the admin's. */
export const OWN_VALVES = ["asks_url", "auth_secret"] as const;

/**
 * The filter's own defaults (its Valves class): a valve still at its default was not set on purpose.
 * Pinned to the filter's by test/fixtures/valves.json (filter-valves.test.ts, test_valves.py).
 */
export const VALVE_DEFAULTS: Readonly<Record<string, unknown>> = {
  asks_url: "http://127.0.0.1:3000",
  auth_secret: "",
  server_url: "",
  model_ids: "",
  token_ttl_seconds: 86_400,
  priority: 0,
};
