// The filter's valves and their defaults, pinned by the table both languages read
// (test/fixtures/valves.json; the filter's side is integrations/open-webui/test_valves.py).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OWN_VALVES, VALVE_DEFAULTS } from "./filter-valves.ts";

const table = JSON.parse(
  readFileSync(new URL("../../test/fixtures/valves.json", import.meta.url), "utf8"),
) as { defaults: Record<string, unknown> };

describe("the filter's valves as connect-openwebui knows them", () => {
  it("has the filter's names and defaults", () => {
    expect(VALVE_DEFAULTS).toEqual(table.defaults);
  });

  it("sets only valves the filter has", () => {
    for (const name of OWN_VALVES) expect(Object.keys(table.defaults)).toContain(name);
  });
});
