import type { QuestionAsk } from "../../lib/ask.ts";

/** A stored-ask fixture for the store's tests: a pending one-question ask on `chatId`. */
export function question(id: string, chatId: string | null, overrides: Partial<QuestionAsk> = {}): QuestionAsk {
  return {
    id,
    kind: "question",
    source: "gateway.question",
    chatId,
    sessionKey: `agent:dev:openwebui:${chatId ?? "x"}`,
    agentId: "dev",
    runId: null,
    createdAt: 1_700_000_000_000,
    expiresAt: 1_700_000_000_000 + 900_000,
    status: "pending",
    resolution: null,
    questions: [{ id: "db", header: "Database", question: "Which?", options: [{ label: "Postgres" }, { label: "SQLite" }], multiSelect: false, allowOther: true }],
    ...overrides,
  };
}
