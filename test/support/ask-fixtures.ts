import type {
  ApprovalAsk,
  ApprovalRequest,
  Ask,
  AskQuestion,
  QuestionAsk,
  SecretAsk,
} from "../../lib/ask.ts";

/**
 * Ask fixtures for unit tests, pending, each on agent dev's Open WebUI session of its chat:
 * - `question`, `approval`, `secret`, `textPrompt`: an ask named by its id and chat, created at T0 with
 *   an expiry, for the broker, the stores and the pages;
 * - `questionAsk`, `approvalAsk`, `secretAsk`: what one card shows, on chat `c1`, with no expiry, for
 *   the cards, the inbox, presence and push payloads.
 */

/** When the routed fixtures are created: a ManualClock's default start. */
export const T0 = 1_700_000_000_000;

const pending = (id: string, chatId: string | null, expiresIn: number) => ({
  id,
  chatId,
  sessionKey: `agent:dev:openwebui:${chatId ?? "x"}`,
  agentId: "dev",
  runId: "run-1",
  createdAt: T0,
  expiresAt: T0 + expiresIn,
  status: "pending" as const,
  resolution: null,
});

export function question(
  id: string,
  chatId: string | null,
  overrides: Partial<QuestionAsk> = {},
): QuestionAsk {
  return {
    ...pending(id, chatId, 900_000),
    kind: "question",
    source: "gateway.question",
    questions: [
      {
        id: "db",
        header: "Database",
        question: "Which?",
        options: [{ label: "Postgres" }, { label: "SQLite" }],
        multiSelect: false,
        allowOther: true,
      },
    ],
    ...overrides,
  };
}

/** A plugin approval "Deploy" that expires after 120 s, as the Gateway's do. */
export function approval(
  id: string,
  chatId: string | null,
  overrides: Partial<ApprovalAsk> = {},
): ApprovalAsk {
  return {
    ...pending(id, chatId, 120_000),
    kind: "approval",
    source: "gateway.plugin-approval",
    approval: {
      title: "Deploy",
      description: "Deploys the build",
      severity: "warning",
      decisions: ["deny", "allow-once", "allow-always"],
    },
    ...overrides,
  };
}

export function secret(
  id: string,
  chatId: string | null,
  overrides: Partial<SecretAsk> = {},
): SecretAsk {
  return {
    ...pending(id, chatId, 900_000),
    kind: "secret",
    source: "gateway.secret",
    secret: {
      questionId: "secret_value",
      name: "API_TOKEN",
      allowedHostsEditable: true,
      prompt: "Paste it",
    },
    ...overrides,
  };
}

/** A text prompt "Which database?" (or a secret prompt) with the 4-minute timeout, continuing its run. */
export function textPrompt(
  id: string,
  chatId: string | null,
  kind: "question" | "secret" = "question",
): Ask {
  const common = {
    ...pending(id, chatId, 240_000),
    source: "text-prompt" as const,
    textPrompt: {
      fallbackText: "Which database?",
      form: kind === "secret" ? ("secret" as const) : ("text" as const),
      continues: "run" as const,
    },
  };
  if (kind === "secret")
    return {
      ...common,
      kind: "secret",
      secret: { name: "TOKEN", prompt: "Paste it", allowedHostsEditable: false },
    };
  return {
    ...common,
    kind: "question",
    questions: [
      {
        id: "answer",
        header: "",
        question: "Which database?",
        options: [],
        multiSelect: false,
        allowOther: true,
      },
    ],
  };
}

/** A card's fixture: no run, created at 0, no expiry. */
const CARD = { runId: null, createdAt: 0, expiresAt: null } as const;

export const questionAsk = (
  questions: AskQuestion[],
  overrides: Partial<QuestionAsk> = {},
): QuestionAsk => question("q1", "c1", { ...CARD, questions, ...overrides });

/** A plugin approval "Pay invoice" (Deny or Allow once), with `request`'s fields over it. */
export const approvalAsk = (request: Partial<ApprovalRequest> = {}): ApprovalAsk =>
  approval("plugin:1", "c1", {
    ...CARD,
    approval: {
      title: "Pay invoice",
      description: "",
      severity: "warning",
      decisions: ["deny", "allow-once"],
      ...request,
    },
  });

/** The `secrets` tool asking for GITHUB_TOKEN, with `overrides` over it. */
export const secretAsk = (overrides: Partial<SecretAsk> = {}): SecretAsk =>
  secret("s1", "c1", {
    ...CARD,
    secret: {
      name: "GITHUB_TOKEN",
      reason: "To open the pull request",
      allowedHostsEditable: false,
      prompt: "Enter GITHUB_TOKEN",
    },
    ...overrides,
  });
