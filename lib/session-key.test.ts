import { describe, expect, it } from "vitest";
import {
  belongsToAgent,
  ChatKeyPattern,
  DEFAULT_SESSION_KEY_PATTERN,
  parseSessionKey,
  textPromptContinuation,
} from "./session-key.ts";

describe("session keys", () => {
  it("parses the agent and the thread and sub-agent markers", () => {
    expect(parseSessionKey("agent:Dev:openwebui:c1")).toMatchObject({
      agentId: "dev",
      isThread: false,
      isSubagent: false,
    });
    expect(parseSessionKey("agent:dev:slack:channel:C1:thread:123")?.isThread).toBe(true);
    expect(parseSessionKey("agent:dev:subagent:5f0c")?.isSubagent).toBe(true);
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
    expect(keys.chatOf("agent:dev:openwebui:abc-123")?.chatId).toBe("abc-123");
    expect(keys.chatOf("agent:dev:openwebui:abc:thread:1")).toBeNull();
    expect(keys.chatOf("agent:other:openwebui:abc")).toBeNull();
    expect(
      new ChatKeyPattern("agent:{agent}:webchat.{chat}", "dev").chatOf("agent:dev:webchat.x1")
        ?.chatId,
    ).toBe("x1");
  });

  it("maps the Pipe's keys and the /v1 keys of the Open WebUI filter, which name the reply too", () => {
    const keys = new ChatKeyPattern(DEFAULT_SESSION_KEY_PATTERN, "dev");
    expect(keys.chatOf("agent:dev:openwebui:c1")).toEqual({ chatId: "c1", replyId: null });
    expect(keys.chatOf("agent:dev:openai-user:openwebui:c1:m1")).toEqual({
      chatId: "c1",
      replyId: "m1",
    });
    // The Gateway's own /v1 sessions: one per request without a `user`, or a `user` of someone else's.
    expect(keys.chatOf("agent:dev:openai:5f0c2e61-9d1b-4d1e-8f5d-4a7c9b0e1f23")).toBeNull();
    expect(keys.chatOf("agent:dev:openai-user:conv-7")).toBeNull();
    expect(keys.chatOf("agent:dev:openai-user:openwebui:c1")).toBeNull();
    expect(keys.chatOf("agent:other:openai-user:openwebui:c1:m1")).toBeNull();
    // The keys a connection's session header gives (server/openwebui/plans.ts), with the reply's user.
    expect(keys.chatOf("agent:dev:openai-user:openwebui:c1:m1:u1")).toEqual({
      chatId: "c1",
      replyId: "m1",
    });
    // ...and what that header gives a task, a temporary chat and a request that names no chat: no chat.
    expect(keys.chatOf("agent:dev:openai-user:openwebuititle_generation:c1:m1:u1")).toBeNull();
    expect(keys.chatOf("agent:dev:openai-user:openwebui:temporary:s1:m1:u1")).toBeNull();
    expect(keys.chatOf("agent:dev:openai-user:openwebui:::u1")).toBeNull();
    expect(keys.chatOf("agent:dev:openai-user:openwebui:c1:m1:u1:x")).toBeNull();
  });

  it("refuses a pattern list with a pattern that has no {chat}", () => {
    expect(
      () => new ChatKeyPattern("agent:{agent}:openwebui:{chat},agent:{agent}:x", "dev"),
    ).toThrow(/must contain \{chat\}/);
  });

  it("tells a text prompt of a /v1 run (answered as the chat's next message) from one of the Pipe's (answered into the run's session)", () => {
    expect(textPromptContinuation("agent:dev:openwebui:c1", "9b2d-run")).toBe("run");
    expect(textPromptContinuation("agent:dev:openai-user:openwebui:c1:m1", "chatcmpl_1")).toBe(
      "chat",
    );
    expect(textPromptContinuation("agent:dev:openai:5f0c", "chatcmpl_2")).toBe("chat");
    // A /v1 request whose connection sets x-openclaw-session-key to a key like the Pipe's.
    expect(textPromptContinuation("agent:dev:openwebui:c1", "chatcmpl_3")).toBe("chat");
  });
});
