import { describe, expect, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { ChatKeyPattern } from "../../lib/session-key.ts";
import type { Outcome, SourceListing } from "../broker/ports.ts";
import type { RunUpdate } from "../prompts/chat-watcher.ts";
import { approvalOutcome, createIntake, questionOutcome, runUpdate } from "./intake.ts";

const approvalAsk = { kind: "approval", expiresAt: 100 } as const;
const resolve = (outcome: Outcome | null, ask: Pick<Ask, "kind" | "expiresAt">) => (typeof outcome === "function" ? outcome(ask as Ask) : outcome);

describe("Gateway records to domain events", () => {
  it("recognises the Gateway's expiry: a deny nobody made at or past the deadline", () => {
    expect(resolve(approvalOutcome({ id: "a", decision: "deny", resolvedBy: null, ts: 100 }), approvalAsk)).toMatchObject({ status: "expired", reason: "expired" });
    expect(resolve(approvalOutcome({ id: "a", decision: "deny", resolvedBy: "someone", ts: 100 }), approvalAsk)).toEqual({ status: "answered", summary: "Deny (elsewhere)", reason: "answered-elsewhere" });
    expect(resolve(approvalOutcome({ id: "a", decision: "deny", resolvedBy: null, ts: 99 }), approvalAsk)).toMatchObject({ summary: "Deny (elsewhere)" });
    expect(resolve(approvalOutcome({ id: "a", decision: "allow-once" }), approvalAsk)).toMatchObject({ summary: "Allow once (elsewhere)" });
    expect(resolve(approvalOutcome({ id: "a" }), approvalAsk)).toMatchObject({ status: "expired" });
  });

  it("tells how a question ended; a secret's answer never shows", () => {
    const answered = questionOutcome({ id: "q", status: "answered", answers: { answers: { db: ["SQLite"] } } });
    expect(resolve(answered, { kind: "question", expiresAt: null })).toMatchObject({ status: "answered", summary: "SQLite", reason: "answered-elsewhere" });
    expect(resolve(answered, { kind: "secret", expiresAt: null })).toMatchObject({ summary: "•••• (secret entered)" });
    expect(questionOutcome({ id: "q", status: "cancelled" })).toMatchObject({ status: "cancelled", reason: "answered-elsewhere" });
    expect(questionOutcome({ id: "q", status: "expired" })).toMatchObject({ status: "expired" });
  });

  it("turns chat frames into run updates: snapshots, suffixes, replacements, ends", () => {
    const run = { runId: "r1", sessionKey: "agent:dev:openwebui:c1", seq: 1 };
    expect(runUpdate({ ...run, state: "delta", deltaText: "lo", message: { content: [{ type: "text", text: "hello" }] } })).toMatchObject({ state: "text", text: "hello", snapshot: true });
    expect(runUpdate({ ...run, state: "delta", deltaText: "lo" })).toMatchObject({ state: "text", text: "lo", snapshot: false });
    expect(runUpdate({ ...run, state: "delta", deltaText: "new reply", replace: true })).toMatchObject({ state: "text", text: "new reply", snapshot: true });
    expect(runUpdate({ ...run, state: "final", message: "done" })).toMatchObject({ state: "final", text: "done", ownRun: false });
    expect(runUpdate({ ...run, runId: "prompt:x:answer", state: "aborted" })).toMatchObject({ state: "stopped", ownRun: true });
  });

  it("takes only the configured agent's sessions, each on the chat its key names", () => {
    const arrived: Ask[] = [];
    const runs: RunUpdate[] = [];
    const listings: SourceListing[] = [];
    const handler = createIntake({
      agentId: "dev",
      chatKeys: new ChatKeyPattern("agent:{agent}:openwebui:{chat}", "dev"),
      sink: { arrived: (ask) => arrived.push(ask), ended: () => {}, listed: (listing) => listings.push(listing), run: (update) => runs.push(update), status: () => {} },
      getQuestion: async () => null,
    });
    const record = { id: "q1", questions: [{ questionId: "db", header: "DB", question: "?", options: [] }], createdAtMs: 1, expiresAtMs: 2, status: "pending" as const };
    handler.question({ ...record, sessionKey: "agent:dev:openwebui:c1" }, "announced");
    handler.question({ ...record, id: "q2", sessionKey: "agent:other:openwebui:c1" }, "announced");
    handler.question({ ...record, id: "q3", sessionKey: "agent:dev:subagent:1" }, "listed");
    expect(arrived.map((ask) => [ask.id, ask.chatId])).toEqual([
      ["q1", "c1"],
      ["q3", null],
    ]);
    handler.chat({ runId: "r", sessionKey: "agent:other:openwebui:c1", state: "final", seq: 1 });
    expect(runs).toEqual([]);
    handler.backfilled({ questions: new Set(["q1"]), pluginApprovals: new Set(), execApprovals: new Set(["e1"]) });
    expect([...(listings[0]?.live.keys() ?? [])]).toEqual(["gateway.question", "gateway.secret", "gateway.plugin-approval", "gateway.exec-approval"]);
  });
});
