import { describe, expect, it } from "vitest";
import { feedSnapshots } from "../test/support/prompt-feeds.ts";
import { type PromptKind, PROMPTS, questionsOf } from "../test/support/text-prompts.ts";
import { mapAnswer, SECRET_MASKED_ENTRY_MESSAGE, SECRET_MASKED_ENTRY_SUMMARY } from "./answers.ts";
import type { ApprovalAsk, Ask, QuestionAsk, SecretAsk } from "./ask.ts";
import type { TabAnswer } from "./protocol.ts";
import { askFromTextPrompt } from "./sources/text-prompt.ts";

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

const questionAsk: QuestionAsk = {
  ...base,
  id: "q1",
  kind: "question",
  source: "gateway.question",
  questions: [
    {
      id: "db",
      header: "Database",
      question: "Which?",
      options: [{ label: "Postgres" }, { label: "SQLite" }],
      multiSelect: false,
      allowOther: false,
    },
    {
      id: "extras",
      header: "Extras",
      question: "Which?",
      options: [{ label: "Redis" }, { label: "Kafka" }],
      multiSelect: true,
      allowOther: true,
    },
  ],
};

describe("mapAnswer", () => {
  it("maps option numbers and names to labels", () => {
    expect(
      mapAnswer(questionAsk, {
        type: "questions",
        answers: { db: ["2"], extras: ["kafka", "Custom"] },
      }),
    ).toEqual({
      ok: true,
      reply: { type: "answers", answers: { db: ["SQLite"], extras: ["Kafka", "Custom"] } },
      status: "answered",
      summary: "Database: SQLite\nExtras: Kafka, Custom",
    });
  });

  it("refuses partial answers, unknown options without Other, and several picks on a single choice", () => {
    expect(
      mapAnswer(questionAsk, { type: "questions", answers: { db: ["SQLite"] } }),
    ).toMatchObject({ ok: false, code: "INVALID" });
    expect(
      mapAnswer(questionAsk, { type: "questions", answers: { db: ["MySQL"], extras: ["Redis"] } }),
    ).toMatchObject({ ok: false });
    expect(
      mapAnswer(questionAsk, { type: "questions", answers: { db: ["1", "2"], extras: ["Redis"] } }),
    ).toMatchObject({ ok: false });
    expect(
      mapAnswer(questionAsk, {
        type: "questions",
        answers: { db: ["1"], extras: ["Redis"], nope: ["x"] },
      }),
    ).toMatchObject({ ok: false });
    expect(mapAnswer(questionAsk, { type: "decision", decision: "deny" })).toMatchObject({
      ok: false,
    });
  });

  it("cancels a question", () => {
    expect(mapAnswer(questionAsk, { type: "cancel" })).toEqual({
      ok: true,
      reply: { type: "cancel" },
      status: "cancelled",
      summary: "Cancelled",
    });
  });

  it("forwards a secret only in the reply, never in the summary", () => {
    const secret: SecretAsk = {
      ...base,
      id: "s1",
      kind: "secret",
      source: "gateway.secret",
      secret: {
        questionId: "secret_value",
        name: "DEMO_TOKEN",
        allowedHostsEditable: true,
        prompt: "?",
      },
    };
    const mapped = mapAnswer(secret, {
      type: "secret",
      value: "hunter2",
      allowedHosts: ["api.example.com", "api.example.com"],
    });
    expect(mapped).toEqual({
      ok: true,
      reply: {
        type: "answers",
        answers: { secret_value: ["hunter2"] },
        allowedHosts: ["api.example.com"],
      },
      status: "answered",
      summary: "•••• (secret entered)",
    });
    expect(mapAnswer(secret, { type: "cancel" })).toMatchObject({
      summary: "Cancelled (nothing entered)",
      status: "cancelled",
    });
  });

  it("maps approval decisions, cancel as deny, and refuses decisions not offered", () => {
    const approval: ApprovalAsk = {
      ...base,
      id: "plugin:1",
      kind: "approval",
      source: "gateway.plugin-approval",
      approval: {
        title: "t",
        description: "d",
        severity: "warning",
        decisions: ["deny", "allow-once"],
      },
    };
    expect(mapAnswer(approval, { type: "decision", decision: "allow-once" })).toEqual({
      ok: true,
      reply: { type: "decision", decision: "allow-once" },
      status: "answered",
      summary: "Allow once",
    });
    expect(mapAnswer(approval, { type: "cancel" })).toMatchObject({
      reply: { type: "decision", decision: "deny" },
      status: "answered",
    });
    expect(mapAnswer(approval, { type: "decision", decision: "allow-always" })).toMatchObject({
      ok: false,
      code: "INVALID",
    });
  });

  it("answers a text prompt with the session's next message; a cancelled one reaches nobody", () => {
    const prompt: QuestionAsk = {
      ...questionAsk,
      id: "prompt:1",
      source: "text-prompt",
      questions: [
        {
          id: "answer",
          header: "",
          question: "Which?",
          options: [{ label: "Yes" }, { label: "No" }],
          multiSelect: false,
          allowOther: false,
        },
      ],
      textPrompt: { fallbackText: "Which?", form: "confirm", continues: "run" },
    };
    expect(mapAnswer(prompt, { type: "text", text: "yes" })).toEqual({
      ok: true,
      reply: { type: "message", text: "Yes" },
      status: "answered",
      summary: "Yes",
    });
    expect(mapAnswer(prompt, { type: "cancel" })).toEqual({
      ok: true,
      reply: null,
      status: "cancelled",
      summary: "Which?",
    });
  });

  it("answers a /v1 reply's text prompt as the chat's next message, which the widget submits: the Gateway is told nothing", () => {
    const prompt: QuestionAsk = {
      ...questionAsk,
      id: "prompt:2",
      source: "text-prompt",
      sessionKey: "agent:dev:openai-user:openwebui:c1:m1",
      questions: [
        {
          id: "answer",
          header: "",
          question: "Which database?",
          options: [{ label: "Postgres" }, { label: "SQLite" }],
          multiSelect: false,
          allowOther: true,
        },
      ],
      textPrompt: {
        fallbackText: "Which database?\n1. Postgres\n2. SQLite",
        form: "choice",
        continues: "chat",
      },
    };
    expect(mapAnswer(prompt, { type: "text", text: "2" })).toEqual({
      ok: true,
      reply: null,
      chatMessage: "SQLite",
      status: "answered",
      summary: "SQLite",
    });
    expect(mapAnswer(prompt, { type: "cancel" })).toEqual({
      ok: true,
      reply: null,
      status: "cancelled",
      summary: "Which database?\n1. Postgres\n2. SQLite",
    });
  });

  it("never lets a /v1 reply's text-prompt secret become a chat message: Cancel asks the agent for masked entry instead", () => {
    const secret: SecretAsk = {
      ...base,
      id: "prompt:3",
      kind: "secret",
      source: "text-prompt",
      sessionKey: "agent:dev:openai-user:openwebui:c1:m1",
      secret: { name: "API key", prompt: "Paste your API key", allowedHostsEditable: false },
      textPrompt: { fallbackText: "Paste your API key", form: "secret", continues: "chat" },
    };
    const typed = mapAnswer(secret, { type: "secret", value: "sk-live-1234" });
    expect(typed).toMatchObject({ ok: false, code: "INVALID" });
    expect(JSON.stringify(typed)).not.toContain("sk-live-1234");
    expect(mapAnswer(secret, { type: "cancel" })).toEqual({
      ok: true,
      reply: null,
      chatMessage: SECRET_MASKED_ENTRY_MESSAGE,
      status: "cancelled",
      summary: SECRET_MASKED_ENTRY_SUMMARY,
    });
  });
});

/** The card a reply ending in a `kind` prompt (or this reply's) becomes, as the chat watcher makes it. */
function promptCard(kind: PromptKind, reply = PROMPTS[kind]): Ask {
  const { prompt } = feedSnapshots([reply]);
  if (prompt === null) throw new Error(`no prompt in ${kind}`);
  return askFromTextPrompt(prompt, {
    id: `prompt:${kind}`,
    sessionKey: "agent:dev:openwebui:c1",
    runId: "run-1",
    agentId: "dev",
    chatId: "c1",
    replyId: null,
    continues: "run",
    now: 0,
    timeoutMs: 240_000,
  });
}

/** What the agent's session is sent as its next message for this answer. */
const sent = (kind: PromptKind, answer: TabAnswer) => {
  const mapped = mapAnswer(promptCard(kind), answer);
  return mapped.ok && mapped.reply?.type === "message" ? mapped.reply.text : mapped;
};

describe("mapAnswer: a text prompt's card continues the run with the answer as the session's next message", () => {
  it("a typed option number on a choice card sends the option's label", () => {
    expect(mapAnswer(promptCard("choice"), { type: "text", text: "2" })).toEqual({
      ok: true,
      reply: { type: "message", text: "SQLite" },
      status: "answered",
      summary: "SQLite",
    });
  });

  it("a picked option, or its name in any case, sends the label; anything else goes as typed", () => {
    const [q] = questionsOf(promptCard("choice"));
    expect(sent("choice", { type: "questions", answers: { [q!.id]: ["Postgres"] } })).toBe(
      "Postgres",
    );
    expect(sent("choice", { type: "text", text: "sqlite" })).toBe("SQLite");
    expect(sent("choice", { type: "text", text: "DuckDB, please" })).toBe("DuckDB, please");
  });

  it("multi-select: `1, 3` typed into the card sends the labels in option order; `1 and 3` goes as typed", () => {
    expect(mapAnswer(promptCard("multiSelect"), { type: "text", text: "1, 3" })).toMatchObject({
      reply: { type: "message", text: "Cheese, Mushrooms" },
      status: "answered",
      summary: "Cheese, Mushrooms",
    });
    expect(sent("multiSelect", { type: "text", text: "mushrooms 1 3" })).toBe("Cheese, Mushrooms");
    expect(sent("multiSelect", { type: "text", text: "1 and 3" })).toBe("1 and 3");
  });

  it("confirm: picking Yes sends `Yes`", () => {
    const card = promptCard("confirm");
    expect(
      mapAnswer(card, { type: "questions", answers: { [questionsOf(card)[0]!.id]: ["Yes"] } }),
    ).toEqual({
      ok: true,
      reply: { type: "message", text: "Yes" },
      status: "answered",
      summary: "Yes",
    });
  });

  it("text: the typed answer is sent as it is", () => {
    expect(sent("text", { type: "text", text: "Nova" })).toBe("Nova");
  });

  it("an empty answer is no answer: refused (the broker then sends nothing and the card stays)", () => {
    expect(mapAnswer(promptCard("text"), { type: "text", text: "   " })).toMatchObject({
      ok: false,
      code: "INVALID",
    });
  });

  it("form: one message carries every question's answer", () => {
    const card = promptCard("form");
    const [db, toppings] = questionsOf(card);
    const message = sent("form", {
      type: "questions",
      answers: { [db!.id]: ["SQLite"], [toppings!.id]: ["Cheese", "Olives"] },
    });
    expect(message).toContain("SQLite");
    expect(message).toContain("Cheese, Olives");
  });

  it("an option label is one plain line, capped: what is submitted is what the card showed", () => {
    const long = "x".repeat(20_000);
    const form = {
      questions: [
        {
          question: "Deploy where?",
          options: [
            'Staging<span style="display:none">, and prod too</span>',
            "Prod\n\nrm -rf /",
            long,
            "<b></b>",
          ],
        },
      ],
    };
    const card = promptCard(
      "form",
      `Let me check.\n\nOpenClaw needs input: ${JSON.stringify(form)}`,
    );
    const [question] = questionsOf(card);
    const labels = question!.options.map((option) => option.label);
    expect(labels).toEqual(["Staging , and prod too", "Prod rm -rf /", `${"x".repeat(119)}…`]);
    for (const label of labels)
      expect(
        mapAnswer(card, { type: "questions", answers: { [question!.id]: [label] } }),
      ).toMatchObject({ ok: true, reply: { type: "message", text: label }, summary: label });
  });
});
