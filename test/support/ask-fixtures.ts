import type { ApprovalAsk, ApprovalRequest, AskQuestion, QuestionAsk, SecretAsk } from "../../lib/ask.ts";

/** Ask fixtures for unit tests of the cards, the inbox and push payloads: pending, on chat `c1` of agent dev's Open WebUI session, no expiry. */

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

/** The `secrets` tool asking for GITHUB_TOKEN, with `overrides` over it. */
export const secretAsk = (overrides: Partial<SecretAsk> = {}): SecretAsk => ({
  ...PENDING,
  id: "s1",
  kind: "secret",
  source: "gateway.secret",
  secret: { name: "GITHUB_TOKEN", reason: "To open the pull request", allowedHostsEditable: false, prompt: "Enter GITHUB_TOKEN" },
  ...overrides,
});
