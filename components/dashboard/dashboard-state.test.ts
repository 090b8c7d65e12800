import { describe, expect, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { dashboardReducer, EMPTY_DASHBOARD, finishedAsks, pendingAsks } from "./dashboard-state.ts";

const ask = (id: string, over: Partial<Ask> = {}): Ask =>
  ({
    id,
    kind: "approval",
    source: "gateway.plugin-approval",
    chatId: "c",
    sessionKey: "agent:dev:openwebui:c",
    agentId: "dev",
    runId: null,
    createdAt: 1,
    expiresAt: null,
    status: "pending",
    resolution: null,
    approval: {
      title: id,
      description: "",
      severity: "warning",
      decisions: ["deny", "allow-once"],
    },
    ...over,
  }) as Ask;

const done = (id: string, at: number): Ask =>
  ask(id, { status: "answered", resolution: { by: "owner", at, summary: "Deny", tabId: null } });

describe("dashboard state", () => {
  it("never brings a finished ask back to pending", () => {
    let state = dashboardReducer(EMPTY_DASHBOARD, { type: "changed", ask: ask("a") });
    state = dashboardReducer(state, { type: "changed", ask: done("a", 5) });
    state = dashboardReducer(state, { type: "changed", ask: ask("a") });
    state = dashboardReducer(state, { type: "listed", asks: [ask("a")] });
    expect(pendingAsks(state)).toEqual([]);
    expect(finishedAsks(state).map((item) => item.id)).toEqual(["a"]);
  });

  it("takes the list as the truth about what is pending after a reconnect", () => {
    let state = dashboardReducer(EMPTY_DASHBOARD, { type: "changed", ask: ask("gone") });
    state = dashboardReducer(state, { type: "listed", asks: [ask("b"), ask("c")] });
    expect(pendingAsks(state).map((item) => item.id)).toEqual(["b", "c"]);
  });

  it("fills the history from the same list, keeping what it already held", () => {
    let state = dashboardReducer(EMPTY_DASHBOARD, { type: "changed", ask: done("heard", 3) });
    state = dashboardReducer(state, { type: "listed", asks: [ask("open"), done("listed", 7)] });
    expect(pendingAsks(state).map((item) => item.id)).toEqual(["open"]);
    expect(finishedAsks(state).map((item) => item.id)).toEqual(["listed", "heard"]);
  });

  it("lists the most urgent first, and history newest first", () => {
    let state = dashboardReducer(EMPTY_DASHBOARD, {
      type: "listed",
      asks: [
        ask("later", { expiresAt: 500 }),
        ask("never"),
        ask("soon", { expiresAt: 100 }),
        done("old", 1),
        done("new", 9),
      ],
    });
    state = dashboardReducer(state, {
      type: "changed",
      ask: ask("older-soon", { expiresAt: 100, createdAt: 0 }),
    });
    expect(pendingAsks(state).map((item) => item.id)).toEqual([
      "older-soon",
      "soon",
      "later",
      "never",
    ]);
    expect(finishedAsks(state).map((item) => item.id)).toEqual(["new", "old"]);
  });

  it("puts critical approvals first, whatever their deadline, then the rest by time left and age", () => {
    const critical = (id: string, over: Partial<Ask> = {}) =>
      ask(id, {
        approval: {
          title: id,
          description: "",
          severity: "critical",
          decisions: ["deny", "allow-once"],
        },
        ...over,
      });
    const question = {
      kind: "question",
      source: "gateway.question",
      questions: [
        { id: "q", header: "", question: "?", options: [], multiSelect: false, allowOther: true },
      ],
    } as Partial<Ask>;
    const state = dashboardReducer(EMPTY_DASHBOARD, {
      type: "listed",
      asks: [
        ask("warning-soon", { expiresAt: 50 }),
        critical("critical-late", { expiresAt: 900 }),
        ask("question-soonest", { ...question, expiresAt: 10 }),
        critical("critical-soon", { expiresAt: 400 }),
        critical("critical-none"),
        ask("old-none", { createdAt: 0 }),
        ask("new-none", { createdAt: 5 }),
      ],
    });
    expect(pendingAsks(state).map((item) => item.id)).toEqual([
      "critical-soon",
      "critical-late",
      "critical-none",
      "question-soonest",
      "warning-soon",
      "old-none",
      "new-none",
    ]);
  });
});
