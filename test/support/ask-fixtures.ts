import type { ApprovalAsk, ApprovalRequest, AskQuestion, QuestionAsk } from "../../lib/ask.ts";

/** Ask fixtures for the cards' unit tests: pending, on chat `c1` of agent dev's Open WebUI session, no expiry. */

const PENDING = {
  chatId: "c1",
  sessionKey: "agent:dev:openwebui:c1",
  agentId: "dev",
  runId: null,
  createdAt: 0,
  expiresAt: null,
  status: "pending",
  resolution: null,
} as const;

export const questionAsk = (questions: AskQuestion[], overrides: Partial<QuestionAsk> = {}): QuestionAsk => ({
  ...PENDING,
  id: "q1",
  kind: "question",
  source: "gateway.question",
  questions,
  ...overrides,
});

/** A plugin approval "Pay invoice" (Deny or Allow once), with `approval`'s fields over it. */
export const approvalAsk = (approval: Partial<ApprovalRequest> = {}): ApprovalAsk => ({
  ...PENDING,
  id: "plugin:1",
  kind: "approval",
  source: "gateway.plugin-approval",
  approval: { title: "Pay invoice", description: "", severity: "warning", decisions: ["deny", "allow-once"], ...approval },
});
