import { describe, expect, it } from "vitest";
import {
  ExecApprovalRequested,
  PluginApprovalRequested,
  askFromExecApproval,
  askFromPluginApproval,
  askFromQuestionRecord,
  isApprovalExpiry,
  orderDecisions,
} from "./gateway.ts";

const context = { chatId: "c1", agentId: "dev" };

describe("Gateway records to asks", () => {
  it("turns an ask_user record into a question ask with Other from isOther", () => {
    const ask = askFromQuestionRecord(
      {
        id: "q1",
        questions: [{ questionId: "theme", header: "Theme", question: "Which?", options: [{ label: "Dark", description: "easy" }, { label: "Light" }], isOther: true }],
        sessionKey: "agent:dev:openwebui:c1",
        agentId: "dev",
        runId: "r1",
        createdAtMs: 1,
        expiresAtMs: 2,
        status: "pending",
      },
      context,
    );
    expect(ask).toMatchObject({ kind: "question", source: "gateway.question", runId: "r1", expiresAt: 2, questions: [{ id: "theme", allowOther: true, multiSelect: false, options: [{ label: "Dark", description: "easy" }, { label: "Light" }] }] });
  });

  it("turns a secrets-tool question into a secret ask with its name, reason and hosts", () => {
    const ask = askFromQuestionRecord(
      {
        id: "s1",
        questions: [{ questionId: "secret_value", header: "API key", question: "Provide the secret for DEMO_TOKEN.", options: [], isSecret: true, secretStore: { name: "DEMO_TOKEN", kind: "secret", allowedHosts: ["api.example.com"], reason: "to call the API" } }],
        sessionKey: "agent:dev:openwebui:c1",
        createdAtMs: 1,
        expiresAtMs: 2,
        status: "pending",
      },
      context,
    );
    expect(ask).toMatchObject({ kind: "secret", source: "gateway.secret", secret: { questionId: "secret_value", name: "DEMO_TOKEN", reason: "to call the API", allowedHosts: ["api.example.com"], allowedHostsEditable: true } });
  });

  it("puts Deny first and clips plugin detail to 600 characters", () => {
    expect(orderDecisions(["allow-once", "deny", "allow-always"])).toEqual(["deny", "allow-once", "allow-always"]);
    expect(orderDecisions(null)).toEqual(["deny", "allow-once", "allow-always"]);
    const ask = askFromPluginApproval(
      { id: "plugin:1", createdAtMs: 1, expiresAtMs: 2, request: { title: "Send mail", description: "to 3 people", detail: "x".repeat(700), severity: "critical", toolName: "mail.send", pluginId: "mailer", sessionKey: "agent:dev:openwebui:c1" } },
      context,
    );
    expect(ask.approval).toMatchObject({ title: "Send mail", severity: "critical", toolName: "mail.send", pluginId: "mailer", decisions: ["deny", "allow-once", "allow-always"] });
    expect(ask.approval.detail).toHaveLength(600);
  });

  it("shows the command of an exec approval", () => {
    const ask = askFromExecApproval({ id: "e1", createdAtMs: 1, expiresAtMs: 2, request: { command: "rm -rf build", cwd: "/srv", host: "gateway", allowedDecisions: ["allow-once", "deny"] } }, context);
    expect(ask.approval).toMatchObject({ command: "rm -rf build", decisions: ["deny", "allow-once"] });
  });

  // Records as the real Gateway (openclaw 2026.9.6) sent them from live runs: a plugin's
  // `before_tool_call` approval and a host exec under `tools.exec.mode: "ask"` (docs/PROTOCOL.md).
  const livePlugin = {
    approvalKind: "plugin",
    id: "plugin:0422b7d4-c354-4e62-8e7f-da0e83ed337b",
    request: {
      pluginId: "asks-approval-test",
      title: "Pay invoice",
      description: "Pays the invoice",
      scope: { kind: "payment", amount: "49.99", currency: "EUR", target: "Stripe" },
      detail: null,
      severity: "critical",
      toolName: "asks_touch_marker",
      toolCallId: "tool_search_code:call_f9a06c46151443db8b2e64ef00d99da0:asks_touch_marker:1",
      agentId: "dev",
      sessionKey: "agent:dev:openwebui:c1",
      runId: "6c70000f-ea57-4327-8b27-62d840bee9e8",
      turnSourceChannel: "webchat",
      turnSourceTo: "agent:dev:openwebui:c1",
      turnSourceAccountId: null,
      turnSourceThreadId: null,
    },
    createdAtMs: 1796037607650,
    expiresAtMs: 1796037667650,
  };
  const liveExec = {
    approvalKind: "exec",
    id: "b87336ea-5244-4e1b-8685-fc60582ca039",
    request: {
      command: "touch /tmp/m/e1",
      systemRunBinding: null,
      systemRunPlan: null,
      cwd: "/tmp/home/workspace",
      nodeId: null,
      host: "gateway",
      security: "allowlist",
      ask: "always",
      warningText: null,
      scope: null,
      commandAnalysis: { commandCount: 1, nestedCommandCount: 0, riskKinds: [], warningLines: [] },
      unavailableDecisions: ["allow-always"],
      allowedDecisions: ["allow-once", "deny"],
      agentId: "dev",
      resolvedPath: "/usr/bin/touch",
      sessionKey: "agent:dev:openwebui:c1",
      sessionId: null,
      runId: "02a788ce-2c17-4254-a716-4cbdd886df3e",
      toolCallId: "call_da59f209f1bc4839817a5b5fa22c30b5",
      turnSourceChannel: "webchat",
      turnSourceTo: "agent:dev:openwebui:c1",
      turnSourceAccountId: null,
      turnSourceThreadId: null,
      cronExecutionSource: null,
      cronOperationBinding: null,
    },
    createdAtMs: 1796037612700,
    expiresAtMs: 1796039412700,
  };

  it("reads a live plugin approval: its scope, its severity, no detail, all three decisions when none are listed", () => {
    const ask = askFromPluginApproval(PluginApprovalRequested.parse(livePlugin), context);
    expect(ask).toMatchObject({ id: livePlugin.id, runId: livePlugin.request.runId, createdAt: livePlugin.createdAtMs, expiresAt: livePlugin.expiresAtMs });
    expect(ask.approval).toEqual({
      title: "Pay invoice",
      description: "Pays the invoice",
      detail: undefined,
      severity: "critical",
      toolName: "asks_touch_marker",
      pluginId: "asks-approval-test",
      scope: { kind: "payment", amount: "49.99", currency: "EUR", target: "Stripe" },
      decisions: ["deny", "allow-once", "allow-always"],
    });
  });

  it("takes a hook's omitted severity (null on the wire) as the Gateway's default, warning", () => {
    const record = { ...livePlugin, request: { ...livePlugin.request, severity: null, scope: null, allowedDecisions: ["allow-once", "deny"] } };
    const ask = askFromPluginApproval(PluginApprovalRequested.parse(record), context);
    expect(ask.approval).toMatchObject({ severity: "warning", decisions: ["deny", "allow-once"] });
    expect(ask.approval.scope).toBeUndefined();
  });

  it("drops a scope it cannot read and keeps the approval", () => {
    const record = { ...livePlugin, request: { ...livePlugin.request, scope: { kind: "payment", amount: "49.99" } } };
    const parsed = PluginApprovalRequested.safeParse(record);
    expect(parsed.success).toBe(true);
    expect(parsed.success && askFromPluginApproval(parsed.data, context).approval.scope).toBeUndefined();
  });

  it("reads a live exec approval: the command, no Always allow under ask=always, info without findings", () => {
    const ask = askFromExecApproval(ExecApprovalRequested.parse(liveExec), context);
    expect(ask.approval).toMatchObject({ command: "touch /tmp/m/e1", severity: "info", decisions: ["deny", "allow-once"] });
    expect(ask.approval.detail).toBeUndefined();
    expect(ask.expiresAt! - ask.createdAt).toBe(30 * 60_000);
  });

  it("shows the Gateway's command analysis as an exec approval's detail and warns", () => {
    const analysed = { ...liveExec, request: { ...liveExec.request, commandAnalysis: { riskKinds: ["destructive"], warningLines: ["Deletes files", "Recursive"] } } };
    const ask = askFromExecApproval(ExecApprovalRequested.parse(analysed), context);
    expect(ask.approval).toMatchObject({ severity: "warning", detail: "Deletes files\nRecursive" });
  });

  it("never offers a decision the Gateway marks unavailable, even when it is listed as allowed", () => {
    expect(orderDecisions(["allow-once", "allow-always", "deny"], ["allow-always"])).toEqual(["deny", "allow-once"]);
  });

  it("recognises the Gateway's expiry: a deny nobody made at or past the deadline", () => {
    expect(isApprovalExpiry({ id: "a", decision: "deny", resolvedBy: null, ts: 100 }, 100)).toBe(true);
    expect(isApprovalExpiry({ id: "a", decision: "deny", resolvedBy: "someone", ts: 100 }, 100)).toBe(false);
    expect(isApprovalExpiry({ id: "a", decision: "deny", resolvedBy: null, ts: 99 }, 100)).toBe(false);
  });
});
