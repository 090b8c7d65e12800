import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { filterSecret } from "./auth/keys.ts";

describe("npm run filter-secret", () => {
  it("prints the filter's own secret for AUTH_SECRET, and not AUTH_SECRET", () => {
    const authSecret = "a".repeat(48);
    const printed = execFileSync(process.execPath, ["server/filter-secret.ts"], {
      env: { ...process.env, AUTH_SECRET: authSecret },
      encoding: "utf8",
    });
    expect(printed).toBe(`${filterSecret(authSecret)}\n`);
    expect(printed).not.toContain(authSecret);
  });
});
