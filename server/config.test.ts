import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.ts";

describe("config", () => {
  it("runs on its defaults", () => {
    const config = parseConfig({});
    expect(config).toMatchObject({ PORT: 3000, OPENCLAW_GATEWAY_URL: "ws://127.0.0.1:18789", AGENT_ID: "main", SESSION_KEY_PATTERN: "agent:{agent}:openwebui:{chat}", DATA_DIR: "data" });
    expect([...config.owners]).toEqual(["owner"]);
  });

  it("stops with one line naming the bad variable", () => {
    expect(() => parseConfig({ PORT: "eighty" })).toThrow(/^Invalid configuration: PORT /);
    expect(() => parseConfig({ OPENCLAW_GATEWAY_URL: "http://x" })).toThrow(/OPENCLAW_GATEWAY_URL must be a ws/);
    expect(() => parseConfig({ SESSION_KEY_PATTERN: "agent:{agent}" })).toThrow(/SESSION_KEY_PATTERN must contain \{chat\}/);
    expect(() => parseConfig({ AUTH_SECRET: "short" })).toThrow(/AUTH_SECRET must be at least 32/);
    expect(() => parseConfig({ OPENWEBUI_ORIGINS: "not a url" })).toThrow(/OPENWEBUI_ORIGINS/);
  });

  it("parses lists", () => {
    const config = parseConfig({ OWNER_USERS: "u1, u2", OPENWEBUI_ORIGINS: "https://chat.example.com" });
    expect([...config.owners]).toEqual(["u1", "u2"]);
    expect(config.OPENWEBUI_ORIGINS).toEqual(["https://chat.example.com"]);
  });
});
