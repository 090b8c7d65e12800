import { describe, expect, it } from "vitest";
import type { ApprovalAsk, Ask, QuestionAsk } from "../../lib/ask.ts";
import { isOwnRun, noticeCall, refusalCall, replyCall } from "./calls.ts";

const base = {
  chatId: "c1",
  sessionKey: "agent:dev:openwebui:c1",
  agentId: "dev",
  runId: null,
  createdAt: 0,
  expiresAt: null,
  status: "pending" as const,
  resolution: null,
};
const question: QuestionAsk = {
  ...base,
  id: "q1",
  kind: "question",
  source: "gateway.question",
  questions: [
    { id: "db", header: "DB", question: "?", options: [], multiSelect: false, allowOther: true },
  ],
};
const plugin: ApprovalAsk = {
  ...base,
  id: "plugin:1",
  kind: "approval",
  source: "gateway.plugin-approval",
  approval: { title: "t", description: "d", severity: "info", decisions: ["deny"] },
};
const exec: ApprovalAsk = { ...plugin, id: "e1", source: "gateway.exec-approval" };
const prompt: Ask = { ...question, id: "prompt:abc", source: "text-prompt" };

describe("domain replies as Gateway calls (docs/ARCHITECTURE.md#sources-and-answers)", () => {
  it("answers and cancels a question with question.resolve", () => {
    expect(replyCall(question, { type: "answers", answers: { db: ["SQLite"] } })).toEqual({
      method: "question.resolve",
      params: { id: "q1", answers: { answers: { db: ["SQLite"] } } },
    });
    expect(replyCall(question, { type: "cancel" })).toEqual({
      method: "question.resolve",
      params: { id: "q1", cancel: true },
    });
  });

  it("passes a secret's edited hosts as secretStoreAllowedHosts", () => {
    expect(
      replyCall(
        { ...question, id: "s1" },
        { type: "answers", answers: { v: ["x"] }, allowedHosts: ["a.example"] },
      ),
    ).toEqual({
      method: "question.resolve",
      params: {
        id: "s1",
        answers: { answers: { v: ["x"] } },
        secretStoreAllowedHosts: ["a.example"],
      },
    });
  });

  it("decides plugin and exec approvals with their own methods", () => {
    expect(replyCall(plugin, { type: "decision", decision: "allow-once" })).toEqual({
      method: "plugin.approval.resolve",
      params: { id: "plugin:1", decision: "allow-once" },
    });
    expect(replyCall(exec, { type: "decision", decision: "deny" })).toEqual({
      method: "exec.approval.resolve",
      params: { id: "e1", decision: "deny" },
    });
  });

  it("continues a text prompt's run with chat.send under a key that marks the run as ours", () => {
    const call = replyCall(prompt, { type: "message", text: "SQLite" });
    expect(call).toEqual({
      method: "chat.send",
      params: {
        sessionKey: base.sessionKey,
        message: "SQLite",
        idempotencyKey: "prompt:abc:answer",
      },
    });
    const notice = noticeCall(prompt, "No secret was received");
    expect(notice.params).toMatchObject({ idempotencyKey: "prompt:abc:notice" });
    expect(isOwnRun("prompt:abc:answer")).toBe(true);
    expect(isOwnRun("prompt:abc:notice")).toBe(true);
    expect(isOwnRun("run-7")).toBe(false);
  });

  it("refuses by policy: cancel a question, deny an approval, nothing for a text prompt", () => {
    expect(refusalCall(question)).toEqual({
      method: "question.resolve",
      params: { id: "q1", cancel: true },
    });
    expect(refusalCall(exec)).toEqual({
      method: "exec.approval.resolve",
      params: { id: "e1", decision: "deny" },
    });
    expect(refusalCall(prompt)).toBeNull();
  });
});
