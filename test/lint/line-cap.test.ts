// What the line cap counts (test/lint/line-cap.ts): product sources only, lines as an editor shows them.
import { describe, expect, it } from "vitest";
import { isProductFile, lineCount } from "./line-cap.ts";

describe("the line cap", () => {
  it("counts product sources, not tests, docs, data or the one-file filter", () => {
    for (const path of [
      "server/broker/broker.ts",
      "components/asks/ApprovalCard.tsx",
      "public/sw.js",
    ])
      expect(isProductFile(path), path).toBe(true);
    for (const path of [
      "server/broker/broker.test.ts",
      "components/dashboard/dashboard-state.test.ts",
      "test/support/fake-gateway.ts",
      "integrations/open-webui/test_openclaw_asks_filter.py",
      "integrations/open-webui/openclaw_asks_filter.py",
      "docs/TESTING.md",
      "package.json",
    ])
      expect(isProductFile(path), path).toBe(false);
  });

  it("counts lines as an editor numbers them", () => {
    expect(lineCount("")).toBe(0);
    expect(lineCount("a")).toBe(1);
    expect(lineCount("a\n")).toBe(1);
    expect(lineCount("a\nb\n")).toBe(2);
    expect(lineCount("a\n\n")).toBe(2);
  });
});
