import { describe, expect, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { SECRET_ENTERED_SUMMARY } from "../../lib/outcomes.ts";
import { secretAsk } from "../../test/support/ask-fixtures.ts";
import {
  historyChats,
  matchesHistoryFilter,
  NO_FILTER,
  outcomeOf,
  rowTitle,
} from "./inbox-model.ts";

const base = {
  source: "gateway.question",
  sessionKey: "k",
  agentId: "dev",
  runId: null,
  createdAt: 1,
  expiresAt: null,
} as const;
const question: Ask = {
  ...base,
  id: "q",
  kind: "question",
  chatId: "chat-a",
  status: "answered",
  resolution: { by: "owner", at: 2, summary: "Postgres", tabId: null },
  questions: [
    {
      id: "db",
      header: "Database",
      question: "Which database?",
      options: [{ label: "Postgres" }, { label: "SQLite" }],
      multiSelect: false,
      allowOther: false,
    },
  ],
};
// What the store keeps of an entered secret: never its value.
const secret: Ask = secretAsk({
  id: "s",
  chatId: "chat-b",
  createdAt: 1,
  status: "answered",
  resolution: { by: "owner", at: 3, summary: SECRET_ENTERED_SUMMARY, tabId: null },
});
const approval: Ask = {
  ...base,
  id: "a",
  source: "gateway.exec-approval",
  kind: "approval",
  chatId: null,
  status: "answered",
  resolution: { by: "owner", at: 4, summary: "Deny", tabId: null },
  approval: {
    title: "Run rm -rf ./build",
    description: "The agent wants to run a command.",
    severity: "critical",
    command: "rm -rf ./build",
    decisions: ["deny", "allow-once"],
  },
};

describe("inbox rows", () => {
  it("headline a question by its question, an approval by its title, a secret by its name and reason", () => {
    expect(rowTitle(question)).toBe("Which database?");
    expect(rowTitle(approval)).toBe("Run rm -rf ./build");
    expect(rowTitle(secret)).toBe("GITHUB_TOKEN: To open the pull request");
    const two = {
      ...question,
      questions: [
        ...(question.kind === "question" ? question.questions : []),
        { id: "b", header: "B", question: "", options: [], multiSelect: false, allowOther: true },
      ],
    } as Ask;
    expect(rowTitle(two)).toBe("Which database? (+1 more)");
  });
});

describe("history filter", () => {
  const all = [question, secret, approval];
  const matching = (filter: Partial<typeof NO_FILTER>) =>
    all
      .filter((ask) => matchesHistoryFilter(ask, { ...NO_FILTER, ...filter }))
      .map((ask) => ask.id);

  it("keeps everything without a filter", () => {
    expect(matching({})).toEqual(["q", "s", "a"]);
  });

  it("filters by kind, outcome and chat (asks of no chat under `none`)", () => {
    expect(matching({ kind: "approval" })).toEqual(["a"]);
    expect(matching({ outcome: "answered" })).toEqual(["q", "s"]);
    expect(matching({ outcome: "denied" })).toEqual(["a"]);
    expect(matching({ chat: "chat-b" })).toEqual(["s"]);
    expect(matching({ chat: "none" })).toEqual(["a"]);
    expect(matching({ kind: "question", outcome: "denied" })).toEqual([]);
  });

  it("tells an approval's decision apart, made here, elsewhere or by policy", () => {
    const decided = (summary: string, status: Ask["status"] = "answered") =>
      outcomeOf({ ...approval, status, resolution: { by: null, at: 5, summary, tabId: null } });
    expect(decided("Allow once")).toBe("allowed");
    expect(decided("Always allow (elsewhere)")).toBe("allowed");
    expect(decided("Deny (elsewhere)")).toBe("denied");
    expect(decided("Denied: guests cannot approve tools", "denied")).toBe("denied");
    expect(decided("Expired", "expired")).toBe("expired");
    expect(outcomeOf(question)).toBe("answered");
  });

  it("searches questions and titles, every word, any case", () => {
    expect(matching({ text: "DATABASE" })).toEqual(["q"]);
    expect(matching({ text: "rm build" })).toEqual(["a"]);
    expect(matching({ text: "github pull" })).toEqual(["s"]);
    expect(matching({ text: "rm postgres" })).toEqual([]);
  });

  it("never searches answers: an answer text or a secret's summary finds nothing", () => {
    expect(matching({ text: "••••" })).toEqual([]);
    expect(matching({ text: "secret entered" })).toEqual([]);
    expect(matching({ text: "deny" })).toEqual([]);
  });

  it("lists the history's chats once each, in order", () => {
    expect(historyChats([question, secret, approval, { ...question, id: "q2" }])).toEqual([
      "chat-a",
      "chat-b",
      "none",
    ]);
  });
});
