import { describe, expect, it } from "vitest";
import {
  askFromExecApproval,
  askFromPluginApproval,
  askFromQuestionRecord,
  orderDecisions,
} from "./gateway.ts";

const context = { chatId: "c1", replyId: null, agentId: "dev" };

describe("Gateway records to asks", () => {
  it("turns an ask_user record into a question ask with Other from isOther", () => {
    const ask = askFromQuestionRecord(
      {
        id: "q1",
        questions: [
          {
            questionId: "theme",
            header: "Theme",
            question: "Which?",
            options: [{ label: "Dark", description: "easy" }, { label: "Light" }],
            isOther: true,
          },
        ],
        sessionKey: "agent:dev:openwebui:c1",
        agentId: "dev",
        runId: "r1",
        createdAtMs: 1,
        expiresAtMs: 2,
        status: "pending",
      },
      context,
    );
    expect(ask).toMatchObject({
      kind: "question",
      source: "gateway.question",
      runId: "r1",
      expiresAt: 2,
      questions: [
        {
          id: "theme",
          allowOther: true,
          multiSelect: false,
          options: [{ label: "Dark", description: "easy" }, { label: "Light" }],
        },
      ],
    });
  });

  it("turns a secrets-tool question into a secret ask with its name, reason and hosts", () => {
    const ask = askFromQuestionRecord(
      {
        id: "s1",
        questions: [
          {
            questionId: "secret_value",
            header: "API key",
            question: "Provide the secret for DEMO_TOKEN.",
            options: [],
            isSecret: true,
            secretStore: {
              name: "DEMO_TOKEN",
              kind: "secret",
              allowedHosts: ["api.example.com"],
              reason: "to call the API",
            },
          },
        ],
        sessionKey: "agent:dev:openwebui:c1",
        createdAtMs: 1,
        expiresAtMs: 2,
        status: "pending",
      },
      context,
    );
    expect(ask).toMatchObject({
      kind: "secret",
      source: "gateway.secret",
      secret: {
        questionId: "secret_value",
        name: "DEMO_TOKEN",
        reason: "to call the API",
        allowedHosts: ["api.example.com"],
        allowedHostsEditable: true,
      },
    });
  });

  it("puts Deny first and clips plugin detail to 600 characters", () => {
    expect(orderDecisions(["allow-once", "deny", "allow-always"])).toEqual([
      "deny",
      "allow-once",
      "allow-always",
    ]);
    expect(orderDecisions(null)).toEqual(["deny", "allow-once", "allow-always"]);
    const ask = askFromPluginApproval(
      {
        id: "plugin:1",
        createdAtMs: 1,
        expiresAtMs: 2,
        request: {
          title: "Send mail",
          description: "to 3 people",
          detail: "x".repeat(700),
          severity: "critical",
          toolName: "mail.send",
          pluginId: "mailer",
          sessionKey: "agent:dev:openwebui:c1",
        },
      },
      context,
    );
    expect(ask.approval).toMatchObject({
      title: "Send mail",
      severity: "critical",
      toolName: "mail.send",
      pluginId: "mailer",
      decisions: ["deny", "allow-once", "allow-always"],
    });
    expect(ask.approval.detail).toHaveLength(600);
  });

  it("shows the command of an exec approval", () => {
    const ask = askFromExecApproval(
      {
        id: "e1",
        createdAtMs: 1,
        expiresAtMs: 2,
        request: {
          command: "rm -rf build",
          cwd: "/srv",
          host: "gateway",
          allowedDecisions: ["allow-once", "deny"],
        },
      },
      context,
    );
    expect(ask.approval).toMatchObject({
      command: "rm -rf build",
      decisions: ["deny", "allow-once"],
    });
  });

  it("titles an exec approval with the command's first words, and a destructive command is critical", () => {
    const command = "rm -rf ./build && npm run deploy -- --prod --region eu-west-1";
    const ask = askFromExecApproval(
      {
        id: "e2",
        createdAtMs: 1,
        expiresAtMs: 2,
        request: { command, host: "gateway", cwd: "/srv" },
      },
      context,
    );
    expect(ask.approval).toMatchObject({
      title: "Run rm -rf ./build && npm run deploy -- --prod…",
      description:
        "The agent wants to run a command on gateway in /srv. It deletes files or data and deploys.",
      severity: "critical",
      command,
    });
  });

  it("never offers a decision the Gateway marks unavailable, even when it is listed as allowed", () => {
    expect(orderDecisions(["allow-once", "allow-always", "deny"], ["allow-always"])).toEqual([
      "deny",
      "allow-once",
    ]);
  });
});
