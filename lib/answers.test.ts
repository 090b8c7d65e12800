import { describe, expect, it } from "vitest";
import type { ApprovalAsk, QuestionAsk, SecretAsk } from "./ask.ts";
import { mapAnswer } from "./answers.ts";

const base = { chatId: "c1", sessionKey: "agent:dev:openwebui:c1", agentId: "dev", runId: null, createdAt: 0, expiresAt: null, status: "pending" as const, shownTo: null, resolution: null };

const questionAsk: QuestionAsk = {
  ...base,
  id: "q1",
  kind: "question",
  source: "gateway.question",
  questions: [
    { id: "db", header: "Database", question: "Which?", options: [{ label: "Postgres" }, { label: "SQLite" }], multiSelect: false, allowOther: false },
    { id: "extras", header: "Extras", question: "Which?", options: [{ label: "Redis" }, { label: "Kafka" }], multiSelect: true, allowOther: true },
  ],
};

describe("mapAnswer", () => {
  it("maps option numbers and names to labels in the Gateway's answers shape", () => {
    expect(mapAnswer(questionAsk, { type: "questions", answers: { db: ["2"], extras: ["kafka", "Custom"] } })).toEqual({
      ok: true,
      call: { method: "question.resolve", params: { id: "q1", answers: { answers: { db: ["SQLite"], extras: ["Kafka", "Custom"] } } } },
      status: "answered",
      summary: "Database: SQLite\nExtras: Kafka, Custom",
    });
  });

  it("refuses partial answers, unknown options without Other, and several picks on a single choice", () => {
    expect(mapAnswer(questionAsk, { type: "questions", answers: { db: ["SQLite"] } })).toMatchObject({ ok: false, code: "INVALID" });
    expect(mapAnswer(questionAsk, { type: "questions", answers: { db: ["MySQL"], extras: ["Redis"] } })).toMatchObject({ ok: false });
    expect(mapAnswer(questionAsk, { type: "questions", answers: { db: ["1", "2"], extras: ["Redis"] } })).toMatchObject({ ok: false });
    expect(mapAnswer(questionAsk, { type: "questions", answers: { db: ["1"], extras: ["Redis"], nope: ["x"] } })).toMatchObject({ ok: false });
    expect(mapAnswer(questionAsk, { type: "decision", decision: "deny" })).toMatchObject({ ok: false });
  });

  it("cancels a question with cancel: true", () => {
    expect(mapAnswer(questionAsk, { type: "cancel" })).toMatchObject({ ok: true, call: { params: { id: "q1", cancel: true } }, status: "cancelled" });
  });

  it("forwards a secret only in the call, never in the summary", () => {
    const secret: SecretAsk = { ...base, id: "s1", kind: "secret", source: "gateway.secret", secret: { questionId: "secret_value", name: "DEMO_TOKEN", allowedHostsEditable: true, prompt: "?" } };
    const mapped = mapAnswer(secret, { type: "secret", value: "hunter2", allowedHosts: ["api.example.com", "api.example.com"] });
    expect(mapped).toEqual({
      ok: true,
      call: { method: "question.resolve", params: { id: "s1", answers: { answers: { secret_value: ["hunter2"] } }, secretStoreAllowedHosts: ["api.example.com"] } },
      status: "answered",
      summary: "•••• (secret entered)",
    });
    expect(mapAnswer(secret, { type: "cancel" })).toMatchObject({ summary: "Cancelled (nothing entered)", status: "cancelled" });
  });

  it("maps approval decisions, cancel as deny, and refuses decisions not offered", () => {
    const approval: ApprovalAsk = { ...base, id: "plugin:1", kind: "approval", source: "gateway.plugin-approval", approval: { title: "t", description: "d", severity: "warning", decisions: ["deny", "allow-once"] } };
    expect(mapAnswer(approval, { type: "decision", decision: "allow-once" })).toMatchObject({ call: { method: "plugin.approval.resolve", params: { id: "plugin:1", decision: "allow-once" } }, summary: "Allow once" });
    expect(mapAnswer(approval, { type: "cancel" })).toMatchObject({ call: { params: { decision: "deny" } }, status: "answered" });
    expect(mapAnswer(approval, { type: "decision", decision: "allow-always" })).toMatchObject({ ok: false, code: "INVALID" });
    expect(mapAnswer({ ...approval, source: "gateway.exec-approval" }, { type: "decision", decision: "deny" })).toMatchObject({ call: { method: "exec.approval.resolve" } });
  });
});
