import { describe, expect, it, vi } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { GATEWAY_RESTARTED } from "../../lib/outcomes.ts";
import { ChatKeyPattern, DEFAULT_SESSION_KEY_PATTERN } from "../../lib/session-key.ts";
import type { Outcome, SourceListing } from "../broker/ports.ts";
import type { RunUpdate } from "../prompts/chat-watcher.ts";
import { approvalOutcome, createIntake, questionOutcome, runUpdate } from "./intake.ts";

const approvalAsk = { kind: "approval", expiresAt: 100 } as const;
const resolve = (outcome: Outcome | null, ask: Pick<Ask, "kind" | "expiresAt">) =>
  typeof outcome === "function" ? outcome(ask as Ask) : outcome;

describe("Gateway records to domain events", () => {
  it("recognises the Gateway's expiry: a deny nobody made at or past the deadline", () => {
    expect(
      resolve(
        approvalOutcome({ id: "a", decision: "deny", resolvedBy: null, ts: 100 }),
        approvalAsk,
      ),
    ).toMatchObject({ status: "expired", reason: "expired" });
    expect(
      resolve(
        approvalOutcome({ id: "a", decision: "deny", resolvedBy: "someone", ts: 100 }),
        approvalAsk,
      ),
    ).toEqual({ status: "answered", summary: "Deny (elsewhere)", reason: "answered-elsewhere" });
    expect(
      resolve(
        approvalOutcome({ id: "a", decision: "deny", resolvedBy: null, ts: 99 }),
        approvalAsk,
      ),
    ).toMatchObject({ summary: "Deny (elsewhere)" });
    expect(
      resolve(approvalOutcome({ id: "a", decision: "allow-once" }), approvalAsk),
    ).toMatchObject({ summary: "Allow once (elsewhere)" });
    expect(resolve(approvalOutcome({ id: "a" }), approvalAsk)).toMatchObject({ status: "expired" });
  });

  it("reads Open WebUI's Stop on the /v1 path: the run's approvals denied and its questions cancelled because its HTTP client went away", () => {
    expect(
      resolve(
        approvalOutcome({ id: "a", decision: "deny", resolvedBy: "approval-scope-closed", ts: 50 }),
        approvalAsk,
      ),
    ).toEqual({
      status: "cancelled",
      summary: "Stopped: the reply ended before an answer",
      reason: "answered-elsewhere",
    });
    const record = {
      id: "q",
      questions: [],
      createdAtMs: 1,
      expiresAtMs: 2,
      status: "cancelled" as const,
    };
    expect(questionOutcome({ ...record, resolvedBy: "requester-inactive" })).toMatchObject({
      status: "cancelled",
      summary: "Stopped: the reply ended before an answer",
    });
    expect(questionOutcome({ ...record, resolvedBy: "gateway-client" })).toMatchObject({
      summary: "Cancelled elsewhere",
    });
  });

  it("asks the Gateway who cancelled a question: the event does not say", async () => {
    const ended: [string, Outcome][] = [];
    const looked: string[] = [];
    const handler = createIntake({
      agentId: "dev",
      chatKeys: new ChatKeyPattern(DEFAULT_SESSION_KEY_PATTERN, "dev"),
      sink: {
        arrived: () => {},
        ended: (id, outcome) => ended.push([id, outcome]),
        listed: () => {},
        run: () => {},
        status: () => {},
      },
      getQuestion: async (id) => {
        looked.push(id);
        if (id === "gone") throw new Error("connection lost");
        return {
          id,
          questions: [],
          createdAtMs: 1,
          expiresAtMs: 2,
          status: "cancelled",
          resolvedBy: "requester-inactive",
        };
      },
    });
    handler.questionResolved({ id: "stopped", status: "cancelled" });
    handler.questionResolved({ id: "gone", status: "cancelled" });
    handler.questionResolved({ id: "expired", status: "expired" });
    await vi.waitFor(() => expect(ended).toHaveLength(3));
    expect(looked).toEqual(["stopped", "gone"]);
    expect(
      Object.fromEntries(
        ended.map(([id, outcome]) => [
          id,
          resolve(outcome, { kind: "question", expiresAt: null })?.summary,
        ]),
      ),
    ).toEqual({
      stopped: "Stopped: the reply ended before an answer",
      gone: "Cancelled elsewhere",
      expired: "Expired",
    });
  });

  it("tells how a question ended; a secret's answer never shows", () => {
    const answered = questionOutcome({
      id: "q",
      status: "answered",
      answers: { answers: { db: ["SQLite"] } },
    });
    expect(resolve(answered, { kind: "question", expiresAt: null })).toMatchObject({
      status: "answered",
      summary: "SQLite",
      reason: "answered-elsewhere",
    });
    expect(resolve(answered, { kind: "secret", expiresAt: null })).toMatchObject({
      summary: "•••• (secret entered)",
    });
    expect(questionOutcome({ id: "q", status: "cancelled" })).toMatchObject({
      status: "cancelled",
      reason: "answered-elsewhere",
    });
    expect(questionOutcome({ id: "q", status: "expired" })).toMatchObject({ status: "expired" });
  });

  it("turns chat frames into run updates: snapshots, suffixes, replacements, ends", () => {
    const run = { runId: "r1", sessionKey: "agent:dev:openwebui:c1", seq: 1 };
    expect(
      runUpdate({
        ...run,
        state: "delta",
        deltaText: "lo",
        message: { content: [{ type: "text", text: "hello" }] },
      }),
    ).toMatchObject({ state: "text", text: "hello", snapshot: true });
    expect(runUpdate({ ...run, state: "delta", deltaText: "lo" })).toMatchObject({
      state: "text",
      text: "lo",
      snapshot: false,
    });
    expect(
      runUpdate({ ...run, state: "delta", deltaText: "new reply", replace: true }),
    ).toMatchObject({ state: "text", text: "new reply", snapshot: true });
    expect(runUpdate({ ...run, state: "final", message: "done" })).toMatchObject({
      state: "final",
      text: "done",
      ownRun: false,
    });
    expect(runUpdate({ ...run, runId: "prompt:x:answer", state: "aborted" })).toMatchObject({
      state: "stopped",
      ownRun: true,
    });
  });

  it("takes only the configured agent's sessions, each on the chat its key names", () => {
    const arrived: Ask[] = [];
    const runs: RunUpdate[] = [];
    const listings: SourceListing[] = [];
    const handler = createIntake({
      agentId: "dev",
      chatKeys: new ChatKeyPattern(DEFAULT_SESSION_KEY_PATTERN, "dev"),
      sink: {
        arrived: (ask) => arrived.push(ask),
        ended: () => {},
        listed: (listing) => listings.push(listing),
        run: (update) => runs.push(update),
        status: () => {},
      },
      getQuestion: async () => null,
    });
    const record = {
      id: "q1",
      questions: [{ questionId: "db", header: "DB", question: "?", options: [] }],
      createdAtMs: 1,
      expiresAtMs: 2,
      status: "pending" as const,
    };
    handler.question({ ...record, sessionKey: "agent:dev:openwebui:c1" }, "announced");
    handler.question({ ...record, id: "q2", sessionKey: "agent:other:openwebui:c1" }, "announced");
    handler.question({ ...record, id: "q3", sessionKey: "agent:dev:subagent:1" }, "listed");
    handler.question(
      { ...record, id: "q4", sessionKey: "agent:dev:openai-user:openwebui:c2:m7" },
      "announced",
    );
    handler.question({ ...record, id: "q5", sessionKey: "agent:dev:openai:0c5e" }, "announced");
    expect(arrived.map((ask) => [ask.id, ask.chatId, ask.replyId])).toEqual([
      ["q1", "c1", undefined],
      ["q3", null, undefined],
      // A /v1 reply's key names its reply: the ask's summary belongs to that reply's widget from the start.
      ["q4", "c2", "m7"],
      ["q5", null, undefined],
    ]);
    handler.chat({ runId: "r", sessionKey: "agent:other:openwebui:c1", state: "final", seq: 1 });
    expect(runs).toEqual([]);
    handler.backfilled({
      questions: new Set(["q1"]),
      pluginApprovals: new Set(),
      execApprovals: new Set(["e1"]),
    });
    expect([...(listings[0]?.live.keys() ?? [])]).toEqual([
      "gateway.question",
      "gateway.secret",
      "gateway.plugin-approval",
      "gateway.exec-approval",
    ]);
  });

  it("says an ask the Gateway no longer lists was raised by a Gateway process that is gone", async () => {
    const listings: SourceListing[] = [];
    const handler = createIntake({
      agentId: "dev",
      chatKeys: new ChatKeyPattern(DEFAULT_SESSION_KEY_PATTERN, "dev"),
      sink: {
        arrived: () => {},
        ended: () => {},
        listed: (listing) => listings.push(listing),
        run: () => {},
        status: () => {},
      },
      getQuestion: async (id) =>
        id === "answered"
          ? {
              id,
              questions: [],
              createdAtMs: 1,
              expiresAtMs: 2,
              status: "answered",
              answers: { answers: { db: ["SQLite"] } },
            }
          : null,
    });
    const empty = { questions: new Set<string>(), pluginApprovals: new Set<string>() };
    handler.backfilled({ ...empty, execApprovals: new Set(), gatewayStartedAt: 1_000 });
    handler.backfilled({ ...empty, execApprovals: new Set() });
    const [restarted, unknown] = listings;
    const approval = (createdAt: number) =>
      ({ id: "a", source: "gateway.plugin-approval", createdAt }) as Ask;
    // Raised before the Gateway that answered the lists started: its run went with the old one.
    expect(await restarted?.outcomeOf(approval(999))).toEqual(GATEWAY_RESTARTED);
    // Raised since, or no start known: nothing says how it ended (the broker takes it as expired).
    expect(await restarted?.outcomeOf(approval(1_000))).toBeNull();
    expect(await unknown?.outcomeOf(approval(999))).toBeNull();
    // A question the Gateway still remembers ends as it says.
    const answered = {
      id: "answered",
      kind: "question",
      source: "gateway.question",
      createdAt: 999,
    };
    expect(
      resolve((await restarted?.outcomeOf(answered as Ask)) ?? null, answered as Ask),
    ).toMatchObject({
      status: "answered",
    });
  });
});
