import { describe, expect, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { SECRET_ENTERED_SUMMARY } from "../../lib/outcomes.ts";
import { secretAsk } from "../../test/support/ask-fixtures.ts";
import { askPush, outcomePush, shorten } from "./payload.ts";

const base = {
  chatId: "c1",
  sessionKey: "k",
  agentId: "dev",
  runId: null,
  createdAt: 0,
  expiresAt: 600_000,
  status: "pending",
  resolution: null,
} as const;
const secret: Ask = secretAsk({ expiresAt: 600_000 });
const payment: Ask = {
  ...base,
  id: "plugin:1",
  kind: "approval",
  source: "gateway.plugin-approval",
  approval: {
    title: "Pay invoice",
    description: "Monthly hosting",
    severity: "critical",
    scope: { kind: "payment", amount: "49.99", currency: "EUR", target: "Stripe" },
    decisions: ["deny", "allow-once", "allow-always"],
  },
};
const options = {
  now: 60_000,
  dashboardUrl: "https://asks.example.com/",
  tokens: { deny: "t-deny", "allow-once": "t-once", "allow-always": "t-always" },
};

describe("push payloads", () => {
  it("a plugin approval: its scope and description, severity, chat, time left; Deny then Allow once, never Always allow", () => {
    expect(askPush(payment, options)).toEqual({
      type: "ask",
      tag: "ask:plugin:1",
      askId: "plugin:1",
      title: "Critical approval: Pay invoice",
      body: "Pay 49.99 EUR to Stripe\nMonthly hosting\nChat c1 · 9 min left",
      url: "https://asks.example.com/#ask=plugin%3A1",
      severity: "critical",
      actions: [
        { action: "deny", title: "Deny", token: "t-deny" },
        { action: "allow-once", title: "Allow once", token: "t-once" },
      ],
    });
  });

  it("a secret request: its name and reason, no actions; the ending says it was entered, never the value", () => {
    const pushed = askPush(secret, options);
    expect(pushed).toMatchObject({
      title: "Secret requested: GITHUB_TOKEN",
      body: "To open the pull request\nChat c1 · 9 min left",
      actions: [],
    });
    const ended: Ask = {
      ...secret,
      status: "answered",
      resolution: { by: "owner", at: 1, summary: SECRET_ENTERED_SUMMARY, tabId: null },
    };
    expect(outcomePush(ended, "https://asks.example.com")).toEqual({
      type: "outcome",
      tag: "ask:s1",
      askId: "s1",
      title: "Secret requested: GITHUB_TOKEN",
      body: `Answered: ${SECRET_ENTERED_SUMMARY}`,
      url: "https://asks.example.com/#ask=s1",
    });
  });

  it("words the scope as the approval's card does", () => {
    const post: Ask = {
      ...payment,
      approval: {
        ...payment.approval,
        severity: "warning",
        scope: { kind: "external-post", target: "github", visibility: "public" },
      },
    };
    expect(askPush(post, options)).toMatchObject({
      title: "Approval: Pay invoice",
      body: "Post publicly to github\nMonthly hosting\nChat c1 · 9 min left",
    });
    const mail: Ask = {
      ...payment,
      approval: {
        ...payment.approval,
        scope: {
          kind: "message-send",
          target: "email",
          recipientCount: 2,
          recipients: ["a@example.com"],
          audience: "external",
        },
      },
    };
    expect(askPush(mail, options).body).toMatch(
      /^Email to 2 external recipients: a@example.com, \+1 more\n/,
    );
  });

  it("says whose run asked, above the chat", () => {
    expect(
      askPush({ ...payment, origin: { kind: "reply", userId: "u-7", name: "Dana" } }, options).body,
    ).toBe(
      "Pay 49.99 EUR to Stripe\nMonthly hosting\nAsked by Dana in Open WebUI\nChat c1 · 9 min left",
    );
  });

  it("names the chat by its title in Open WebUI when known", () => {
    expect(askPush(payment, { ...options, chatTitle: "Hosting bills" }).body).toBe(
      "Pay 49.99 EUR to Stripe\nMonthly hosting\nChat Hosting bills · 9 min left",
    );
    expect(
      askPush({ ...payment, chatId: null }, { ...options, chatTitle: "ignored" }).body,
    ).toMatch(/\nNo chat · 9 min left$/);
  });

  it("shortens with an ellipsis, never silently", () => {
    expect(shorten("a  b\nc", 10)).toBe("a b c");
    expect(shorten("x".repeat(30), 10)).toBe(`${"x".repeat(9)}…`);
  });
});
