// The boundary check of approval records, on records as the real Gateway sent them: what it reads
// and what it forgives (the converters in lib/sources turn the checked record into an Ask).
import { describe, expect, it } from "vitest";
import { askFromExecApproval, askFromPluginApproval } from "../../lib/sources/gateway.ts";
import { type Check, checkExecApproval, checkPluginApproval } from "./records.ts";

const context = { chatId: "c1", replyId: null, agentId: "dev" };

function valid<T>(check: Check<T>, record: unknown): T {
  const checked = check(record);
  if (!checked.ok) throw new Error(`rejected: ${checked.error}`);
  return checked.value;
}
const plugin = (record: unknown) => valid(checkPluginApproval, record);
const exec = (record: unknown) => valid(checkExecApproval, record);

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

describe("approval records from live runs", () => {
  it("reads a live plugin approval: its scope, its severity, no detail, all three decisions when none are listed", () => {
    const ask = askFromPluginApproval(plugin(livePlugin), context);
    expect(ask).toMatchObject({
      id: livePlugin.id,
      runId: livePlugin.request.runId,
      createdAt: livePlugin.createdAtMs,
      expiresAt: livePlugin.expiresAtMs,
    });
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
    const record = {
      ...livePlugin,
      request: {
        ...livePlugin.request,
        severity: null,
        scope: null,
        allowedDecisions: ["allow-once", "deny"],
      },
    };
    const ask = askFromPluginApproval(plugin(record), context);
    expect(ask.approval).toMatchObject({ severity: "warning", decisions: ["deny", "allow-once"] });
    expect(ask.approval.scope).toBeUndefined();
  });

  it("drops a scope it cannot read and keeps the approval", () => {
    const record = {
      ...livePlugin,
      request: { ...livePlugin.request, scope: { kind: "payment", amount: "49.99" } },
    };
    expect(askFromPluginApproval(plugin(record), context).approval.scope).toBeUndefined();
  });

  it("reads a live exec approval: the command in its title, no Always allow under ask=always, a warning by default", () => {
    const ask = askFromExecApproval(exec(liveExec), context);
    expect(ask.approval).toMatchObject({
      title: "Run touch /tmp/m/e1",
      command: "touch /tmp/m/e1",
      severity: "warning",
      decisions: ["deny", "allow-once"],
    });
    expect(ask.approval.detail).toBeUndefined();
    expect(ask.expiresAt! - ask.createdAt).toBe(30 * 60_000);
  });

  it("shows the Gateway's command analysis as an exec approval's detail and warns", () => {
    const analysed = {
      ...liveExec,
      request: {
        ...liveExec.request,
        commandAnalysis: {
          riskKinds: ["destructive"],
          warningLines: ["Deletes files", "Recursive"],
        },
      },
    };
    const ask = askFromExecApproval(exec(analysed), context);
    expect(ask.approval).toMatchObject({ severity: "warning", detail: "Deletes files\nRecursive" });
  });
});
