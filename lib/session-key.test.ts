import { describe, expect, it } from "vitest";
import { ChatKeyPattern, belongsToAgent, parseSessionKey } from "./session-key.ts";

describe("session keys", () => {
  it("parses the agent and the thread, sub-agent and cron markers", () => {
    expect(parseSessionKey("agent:Dev:openwebui:c1")).toMatchObject({ agentId: "dev", isThread: false, isSubagent: false, isCron: false });
    expect(parseSessionKey("agent:dev:slack:channel:C1:thread:123")?.isThread).toBe(true);
    expect(parseSessionKey("agent:dev:subagent:5f0c")?.isSubagent).toBe(true);
    expect(parseSessionKey("agent:dev:cron:nightly")?.isCron).toBe(true);
    expect(parseSessionKey("main")).toBeNull();
  });

  it("matches the agent by the parsed key, case-insensitively, never by prefix", () => {
    expect(belongsToAgent("agent:DEV:openwebui:c1", undefined, "dev")).toBe(true);
    expect(belongsToAgent("agent:dev2:openwebui:c1", undefined, "dev")).toBe(false);
    expect(belongsToAgent("agent:dev:openwebui:c1", "other", "dev")).toBe(false);
    expect(belongsToAgent(undefined, "dev", "dev")).toBe(false);
  });

  it("maps chat ids through the configured pattern", () => {
    const keys = new ChatKeyPattern("agent:{agent}:openwebui:{chat}", "Dev");
    expect(keys.chatIdOf("agent:dev:openwebui:abc-123")).toBe("abc-123");
    expect(keys.chatIdOf("agent:dev:openwebui:abc:thread:1")).toBeNull();
    expect(keys.chatIdOf("agent:other:openwebui:abc")).toBeNull();
    expect(keys.sessionKeyOf("abc")).toBe("agent:dev:openwebui:abc");
    expect(new ChatKeyPattern("agent:{agent}:webchat.{chat}", "dev").chatIdOf("agent:dev:webchat.x1")).toBe("x1");
  });
});
