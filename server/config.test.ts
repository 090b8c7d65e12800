import { describe, expect, it } from "vitest";
import { debugShowsFrames, parseConfig } from "./config.ts";

describe("config", () => {
  it("runs on its defaults", () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      OPENCLAW_GATEWAY_URL: "ws://127.0.0.1:18789",
      AGENT_ID: "main",
      SESSION_KEY_PATTERN:
        "agent:{agent}:openwebui:{chat},agent:{agent}:openai-user:openwebui:{chat}:{reply},agent:{agent}:openai-user:openwebui:{chat}:{reply}:{user}",
      DATA_DIR: "data",
    });
    expect([...config.owners]).toEqual(["owner"]);
    expect(config).toMatchObject({
      MAX_TOKEN_DAYS: 30,
      MAX_CONNECTIONS_PER_ADDRESS: 256,
      HEADERS_TIMEOUT_SECONDS: 5,
      REQUEST_TIMEOUT_SECONDS: 30,
      TRUSTED_PROXIES: [],
    });
  });

  it("stops with one line naming the bad variable", () => {
    expect(() => parseConfig({ PORT: "eighty" })).toThrow(/^Invalid configuration: PORT /);
    expect(() => parseConfig({ OPENCLAW_GATEWAY_URL: "http://x" })).toThrow(
      /OPENCLAW_GATEWAY_URL must be a ws/,
    );
    expect(() => parseConfig({ SESSION_KEY_PATTERN: "agent:{agent}" })).toThrow(
      /SESSION_KEY_PATTERN must contain \{chat\}/,
    );
    expect(() => parseConfig({ AUTH_SECRET: "short" })).toThrow(/AUTH_SECRET must be at least 32/);
    expect(() => parseConfig({ OPENWEBUI_ORIGINS: "not a url" })).toThrow(/OPENWEBUI_ORIGINS/);
    expect(() => parseConfig({ MAX_TOKEN_DAYS: "0" })).toThrow(/MAX_TOKEN_DAYS/);
    expect(() => parseConfig({ MAX_TOKEN_DAYS: "1", OWNER_LINK_HOURS: "48" })).toThrow(
      /OWNER_LINK_HOURS \(48\) is longer than MAX_TOKEN_DAYS \(1\) allows/,
    );
    expect(() => parseConfig({ MAX_CONNECTIONS_PER_ADDRESS: "many" })).toThrow(
      /MAX_CONNECTIONS_PER_ADDRESS/,
    );
    expect(() => parseConfig({ HEADERS_TIMEOUT_SECONDS: "0" })).toThrow(/HEADERS_TIMEOUT_SECONDS/);
    expect(() =>
      parseConfig({ HEADERS_TIMEOUT_SECONDS: "40", REQUEST_TIMEOUT_SECONDS: "30" }),
    ).toThrow(/HEADERS_TIMEOUT_SECONDS \(40\) is longer than REQUEST_TIMEOUT_SECONDS \(30\)/);
    expect(() => parseConfig({ TRUSTED_PROXIES: "proxy.local" })).toThrow(
      /TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR subnets/,
    );
    expect(() => parseConfig({ OPENWEBUI_URL: "chat.example.com" })).toThrow(
      /^Invalid configuration: OPENWEBUI_URL /,
    );
    expect(() => parseConfig({ OPENWEBUI_URL: "javascript:alert(1)" })).toThrow(
      /OPENWEBUI_URL must be an http/,
    );
    expect(() => parseConfig({ VAPID_PUBLIC_KEY: "B".repeat(87) })).toThrow(
      /VAPID_PRIVATE_KEY must be set together with its pair/,
    );
    expect(() => parseConfig({ VAPID_SUBJECT: "owner@example.com" })).toThrow(
      /VAPID_SUBJECT must be a mailto: address or an https:\/\/ URL/,
    );
  });

  it("takes Open WebUI's address without a trailing slash, and leaves it unset by default", () => {
    expect(parseConfig({}).OPENWEBUI_URL).toBeUndefined();
    expect(parseConfig({ OPENWEBUI_URL: "https://chat.example.com/owui/" }).OPENWEBUI_URL).toBe(
      "https://chat.example.com/owui",
    );
  });

  it("REDIS_URL: a redis URL, and only with an explicit AUTH_SECRET (a generated one would differ per instance)", () => {
    const secret = "a-secret-of-at-least-thirty-two-characters";
    expect(parseConfig({ REDIS_URL: "redis://127.0.0.1:6380", AUTH_SECRET: secret })).toMatchObject(
      { REDIS_URL: "redis://127.0.0.1:6380", REDIS_KEY_PREFIX: "openclaw-asks:" },
    );
    expect(() => parseConfig({ REDIS_URL: "redis://127.0.0.1:6380" })).toThrow(
      /^Invalid configuration: AUTH_SECRET must be set when REDIS_URL is/,
    );
    expect(() => parseConfig({ REDIS_URL: "http://127.0.0.1", AUTH_SECRET: secret })).toThrow(
      /REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/,
    );
    expect(parseConfig({}).REDIS_URL).toBeUndefined();
  });

  it("parses lists", () => {
    const config = parseConfig({
      OWNER_USERS: "u1, u2",
      OPENWEBUI_ORIGINS: "https://chat.example.com",
    });
    expect([...config.owners]).toEqual(["u1", "u2"]);
    expect(config.OPENWEBUI_ORIGINS).toEqual(["https://chat.example.com"]);
    expect(parseConfig({ TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.1, ::1" }).TRUSTED_PROXIES).toEqual([
      "10.0.0.0/8",
      "192.0.2.1",
      "::1",
    ]);
  });

  it("keeps history HISTORY_DAYS (90) and owner links OWNER_LINK_HOURS (24)", () => {
    expect(parseConfig({})).toMatchObject({ HISTORY_DAYS: 90, OWNER_LINK_HOURS: 24 });
    expect(parseConfig({ HISTORY_DAYS: "7", OWNER_LINK_HOURS: "2" })).toMatchObject({
      HISTORY_DAYS: 7,
      OWNER_LINK_HOURS: 2,
    });
    expect(() => parseConfig({ HISTORY_DAYS: "0" })).toThrow(
      /^Invalid configuration: HISTORY_DAYS /,
    );
    expect(() => parseConfig({ OWNER_LINK_HOURS: "a day" })).toThrow(
      /^Invalid configuration: OWNER_LINK_HOURS /,
    );
  });

  it("refuses DEBUG that turns on socket.io or engine.io logging (it prints decoded frames, secret values included) unless ALLOW_UNSAFE_DEBUG=1", () => {
    for (const debug of [
      "socket.io*",
      "*",
      "socket.io-parser",
      "engine*",
      "socket.io:*,-socket.io-parser",
      "express:*, engine",
    ]) {
      expect(debugShowsFrames(debug), debug).toBe(true);
      expect(() => parseConfig({ DEBUG: debug }), debug).toThrow(
        /^Invalid configuration: DEBUG .*ALLOW_UNSAFE_DEBUG=1/,
      );
    }
    for (const debug of ["express:*", "next:*", "*,-socket.io*,-engine*", "socket.io-client:*"]) {
      expect(debugShowsFrames(debug), debug).toBe(false);
      expect(parseConfig({ DEBUG: debug }).unsafeDebug).toBe(false);
    }
    expect(parseConfig({ DEBUG: "socket.io*", ALLOW_UNSAFE_DEBUG: "1" }).unsafeDebug).toBe(true);
    expect(() => parseConfig({ DEBUG: "socket.io*", ALLOW_UNSAFE_DEBUG: "yes" })).toThrow(
      /ALLOW_UNSAFE_DEBUG must be 1/,
    );
  });

  it("ALLOW_UNVOUCHED_RUNS is off by default, and only 1 turns it on", () => {
    expect(parseConfig({}).ALLOW_UNVOUCHED_RUNS).toBeUndefined();
    expect(parseConfig({ ALLOW_UNVOUCHED_RUNS: "1" }).ALLOW_UNVOUCHED_RUNS).toBe("1");
    expect(() => parseConfig({ ALLOW_UNVOUCHED_RUNS: "true" })).toThrow(
      /^Invalid configuration: ALLOW_UNVOUCHED_RUNS must be 1/,
    );
  });
});
