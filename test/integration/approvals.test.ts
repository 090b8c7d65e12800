// Plugin and exec approvals against the real OpenClaw Gateway (docs/ARCHITECTURE.md#sources-and-answers, #routing; docs/SECURITY.md#chat-ownership; issue 4):
// request → card → decision → the requester gets exactly that decision; answered elsewhere; expiry
// with a real 2-second `timeoutMs`; channel threads and guests denied at once; sub-agents on the
// dashboard only; sessions of another agent never touched.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OperatorConnection, Payload } from "../support/gateway-client.ts";
import {
  newChat,
  type PendingApproval,
  requestApproval,
  sessionKeyOf as chatKey,
  startOnGateway,
  stopOnGateway,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import { stubScript } from "../support/stub-model.ts";
import type { TestServer } from "../support/tabs.ts";

let requester: OperatorConnection;
/** Another operator client: the Control UI / `/approve` / another instance answering elsewhere. */
let elsewhere: OperatorConnection;
let server: TestServer;
const { tab } = useTabs({ server: () => server });

type Pending = PendingApproval & { startedAt: number };

/** The agent side of an approval of `kind`: the call stays open until a decision or expiry (120 s unless `extra` says otherwise). */
function pendingApproval(
  kind: "plugin" | "exec",
  params: Record<string, unknown>,
  sessionKey: string,
  extra: Record<string, unknown>,
): Pending {
  const startedAt = Date.now();
  return {
    ...requestApproval(requester, elsewhere, kind, {
      ...params,
      sessionKey,
      timeoutMs: 120_000,
      ...extra,
    }),
    startedAt,
  };
}

const requestPlugin = (sessionKey: string, extra: Record<string, unknown> = {}) =>
  pendingApproval(
    "plugin",
    {
      pluginId: "deploy-kit",
      title: "Deploy to production",
      description: "Pushes the current build to prod",
      toolName: "deploy",
    },
    sessionKey,
    extra,
  );

const requestExec = (sessionKey: string, extra: Record<string, unknown> = {}) =>
  pendingApproval(
    "exec",
    { command: "rm -rf ./build && make release", cwd: "/srv/app", host: "gateway" },
    sessionKey,
    extra,
  );

const kinds = [
  {
    name: "plugin",
    request: requestPlugin,
    list: "plugin.approval.list",
    resolve: "plugin.approval.resolve",
    source: "gateway.plugin-approval",
  },
  {
    name: "exec",
    request: requestExec,
    list: "exec.approval.list",
    resolve: "exec.approval.resolve",
    source: "gateway.exec-approval",
  },
] as const;

beforeAll(async () => {
  ({ requester, elsewhere, server } = await startOnGateway({ elsewhere: true }));
});

afterAll(() => stopOnGateway({ server, requester, elsewhere }));

describe("plugin approvals on the real Gateway", () => {
  it("shows the card on the viewing tab: title, description, first 600 characters of detail, tool, plugin, severity, Deny first", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const detail = `${"0123456789".repeat(80)}TAIL-BEYOND-600`;
    const pending = requestPlugin(chatKey(chatId), { detail, severity: "critical" });
    const requested = await pending.requested;
    const shown = await viewer.waitForShow((a) => a.id === requested.id);
    expect(shown).toMatchObject({
      id: requested.id,
      kind: "approval",
      source: "gateway.plugin-approval",
      chatId,
      agentId: TEST_AGENT,
      status: "pending",
      createdAt: requested.createdAtMs,
      expiresAt: requested.expiresAtMs,
    });
    expect(shown.kind === "approval" && shown.approval).toEqual({
      title: "Deploy to production",
      description: "Pushes the current build to prod",
      detail: detail.slice(0, 600),
      severity: "critical",
      toolName: "deploy",
      pluginId: "deploy-kit",
      decisions: ["deny", "allow-once", "allow-always"],
    });
    expect(
      await viewer.send("ask:answer", {
        askId: requested.id,
        answer: { type: "decision", decision: "deny" },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await pending.decision).toMatchObject({ id: requested.id, decision: "deny" });
  });

  it("offers one decision per allowed decision, Deny first, and refuses one that is not offered", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const pending = requestPlugin(chatKey(chatId), { allowedDecisions: ["allow-once", "deny"] });
    const { id } = await pending.requested;
    const shown = await viewer.waitForShow((a) => a.id === id);
    expect(shown.kind === "approval" && shown.approval.decisions).toEqual(["deny", "allow-once"]);
    const refused = await viewer.send("ask:answer", {
      askId: id,
      answer: { type: "decision", decision: "allow-always" },
    });
    expect(refused).toMatchObject({ ok: false, error: { code: "INVALID" } });
    expect(server.broker.getPending(id)?.status).toBe("pending");
    expect(
      await viewer.send("ask:answer", {
        askId: id,
        answer: { type: "decision", decision: "allow-once" },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await pending.decision).toMatchObject({ decision: "allow-once" });
  });
});

describe.each(kinds)("$name approvals end to end on the real Gateway", (kind) => {
  it.each(["allow-once", "allow-always", "deny"] as const)(
    "§6 arrives, a tab views the chat: request → card → %s → the requester gets exactly that decision",
    async (decision) => {
      const chatId = newChat();
      const viewer = await tab(chatId);
      const pending = kind.request(chatKey(chatId));
      const requested = await pending.requested;
      const shown = await viewer.waitForShow((a) => a.id === requested.id);
      expect(shown).toMatchObject({
        kind: "approval",
        source: kind.source,
        chatId,
        status: "pending",
        expiresAt: requested.expiresAtMs,
      });
      if (kind.name === "exec") {
        // The same card with the command instead of the tool.
        expect(shown.kind === "approval" && shown.approval.command).toBe(
          "rm -rf ./build && make release",
        );
        expect(shown.kind === "approval" && shown.approval.toolName).toBeUndefined();
      }
      const offered = shown.kind === "approval" ? shown.approval.decisions : [];
      expect(offered[0]).toBe("deny");
      expect(offered).toContain(decision);

      const ack = await viewer.send("ask:answer", {
        askId: requested.id,
        answer: { type: "decision", decision },
      });
      expect(ack).toEqual({ ok: true, status: "answered" });
      expect(await pending.decision).toMatchObject({ id: requested.id, decision });
      const close = await viewer.waitForClose(requested.id);
      expect(close).toMatchObject({ askId: requested.id, reason: "answered" });
      // Exactly one resolution at the Gateway, with that decision.
      const resolved = await elsewhere.waitForEvent(
        `${kind.name}.approval.resolved`,
        (p) => p.id === requested.id,
      );
      expect(resolved.decision).toBe(decision);
      expect(
        elsewhere.events.filter(
          (e) => e.event === `${kind.name}.approval.resolved` && e.payload.id === requested.id,
        ),
      ).toHaveLength(1);
      expect(await server.store.get(requested.id)).toMatchObject({
        status: "answered",
        resolution: { by: "owner", tabId: viewer.socket.id },
      });
    },
  );

  it("§6 Cancel: approval = deny", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const pending = kind.request(chatKey(chatId));
    const { id } = await pending.requested;
    await viewer.waitForShow((a) => a.id === id);
    const ack = await viewer.send("ask:answer", { askId: id, answer: { type: "cancel" } });
    expect(ack).toMatchObject({ ok: true });
    expect(await pending.decision).toMatchObject({ id, decision: "deny" });
    const close = await viewer.waitForClose(id);
    expect(["answered", "cancelled"]).toContain(close.reason);
  });

  it("§6 answered elsewhere: the card closes with reason answered-elsewhere and a late answer gets ALREADY_RESOLVED", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const pending = kind.request(chatKey(chatId));
    const { id } = await pending.requested;
    await viewer.waitForShow((a) => a.id === id);
    await elsewhere.request(kind.resolve, { id, decision: "allow-once" });
    expect(await viewer.waitForClose(id)).toMatchObject({
      askId: id,
      reason: "answered-elsewhere",
    });
    expect(await pending.decision).toMatchObject({ decision: "allow-once" });
    const late = await viewer.send("ask:answer", {
      askId: id,
      answer: { type: "decision", decision: "deny" },
    });
    expect(late).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
    expect((await server.store.get(id))?.status).toBe("answered");
  });

  it("§6 timeout: a real 2-second timeoutMs closes the card with reason expired (not answered-elsewhere)", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const pending = kind.request(chatKey(chatId), { timeoutMs: 2_000 });
    const requested = await pending.requested;
    const shown = await viewer.waitForShow((a) => a.id === requested.id);
    // The countdown runs to the Gateway's own deadline.
    expect(shown.expiresAt).toBe(requested.expiresAtMs);
    expect(requested.expiresAtMs - requested.createdAtMs).toBe(2_000);
    expect(await viewer.waitForClose(requested.id)).toMatchObject({
      askId: requested.id,
      reason: "expired",
    });
    expect((await server.store.get(requested.id))?.status).toBe("expired");
    const outcome = await pending.decision;
    expect(outcome.decision === null || outcome.decision === "deny").toBe(true);
    const late = await viewer.send("ask:answer", {
      askId: requested.id,
      answer: { type: "decision", decision: "allow-once" },
    });
    expect(late).toMatchObject({ ok: false, error: { code: "EXPIRED" } });
  });

  it("§6 arrives, no tab views the chat: it waits until its expiry, then no tab ever sees it", async () => {
    const chatId = newChat();
    const pending = kind.request(chatKey(chatId), { timeoutMs: 2_000 });
    const { id } = await pending.requested;
    await expect
      .poll(() => server.broker.getPending(id)?.status, { timeout: 10_000 })
      .toBe("pending");
    await pending.decision;
    await expect
      .poll(async () => (await server.store.get(id))?.status, { timeout: 10_000 })
      .toBe("expired");
    const late = await tab(chatId);
    expect(late.shown.map((a) => a.id)).not.toContain(id);
    expect((await late.list()).map((a) => a.id)).not.toContain(id);
  });

  it("§6 session is a channel thread: denied at once, no card", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const watcher = await tab(null);
    expect(await watcher.send("asks:watch", {})).toEqual({ ok: true });
    const threadKey = `agent:${TEST_AGENT}:slack:channel:${chatId}:thread:1717171717.000100`;
    const pending = kind.request(threadKey);
    const { id } = await pending.requested;
    expect(await pending.decision).toMatchObject({ id, decision: "deny" });
    // "At once": long before the 120 s timeout.
    expect(Date.now() - pending.startedAt).toBeLessThan(15_000);
    await expect
      .poll(async () => (await server.store.get(id))?.status, { timeout: 10_000 })
      .toBe("denied");
    expect(viewer.shown.map((a) => a.id)).not.toContain(id);
    expect(watcher.shown.map((a) => a.id)).not.toContain(id);
  });

  it("§6 chat's user is not in OWNER_USERS: denied at once, no card, the summary says it needs the owner", async () => {
    const chatId = newChat();
    const guest = await tab(chatId, "alice");
    const pending = kind.request(chatKey(chatId));
    const { id } = await pending.requested;
    expect(await pending.decision).toMatchObject({ id, decision: "deny" });
    expect(Date.now() - pending.startedAt).toBeLessThan(15_000);
    await expect
      .poll(async () => (await server.store.get(id))?.status, { timeout: 10_000 })
      .toBe("denied");
    expect((await server.store.get(id))?.resolution?.summary).toMatch(/owner/i);
    expect(guest.shown.map((a) => a.id)).not.toContain(id);
  });

  it("§9: an approval that arrived before the chat's owner was known is never shown to a guest who then becomes its owner (guest rules apply)", async () => {
    const chatId = newChat();
    const pending = kind.request(chatKey(chatId));
    const { id } = await pending.requested;
    await expect
      .poll(() => server.broker.getPending(id)?.status, { timeout: 10_000 })
      .toBe("pending");
    // alice (not an owner) opens the chat first: she becomes its recorded owner.
    const guest = await tab(chatId, "alice");
    // The guest rules now apply: alice never gets a card to allow it, and it is denied.
    await expect
      .poll(async () => (await server.store.get(id))?.status, { timeout: 10_000 })
      .not.toBe("pending")
      .catch(() => {});
    expect
      .soft(
        guest.shown.map((a) => a.id),
        "a guest got an approval card",
      )
      .not.toContain(id);
    expect((await server.store.get(id))?.status).toBe("denied");
    expect(await pending.decision).toMatchObject({ id, decision: "deny" });
  });

  it("§6 session is a sub-agent: not shown in chat tabs, only on the dashboard, where an owner can answer it", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const dashboard = await tab(null);
    expect(await dashboard.send("asks:watch", {})).toEqual({ ok: true });
    const subKey = `${chatKey(chatId)}:subagent:${randomUUID()}`;
    const pending = kind.request(subKey);
    const { id } = await pending.requested;
    const changed = await dashboard.waitFor(
      () => dashboard.changed.find((a) => a.id === id),
      "ask:changed for the sub-agent approval",
    );
    expect(changed).toMatchObject({ chatId: null, status: "pending" });
    expect((await dashboard.list()).find((a) => a.id === id)).toMatchObject({
      chatId: null,
      sessionKey: subKey,
    });
    expect(viewer.shown.map((a) => a.id)).not.toContain(id);
    expect(dashboard.shown.map((a) => a.id)).not.toContain(id);

    expect(
      await dashboard.send("ask:answer", {
        askId: id,
        answer: { type: "decision", decision: "allow-once" },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await pending.decision).toMatchObject({ decision: "allow-once" });
    expect(viewer.shown.map((a) => a.id)).not.toContain(id);
  });

  it("another agent's session: never shown, never resolved, not even by the guest policy", async () => {
    const chatId = newChat();
    // A guest chat, so that a wrongly admitted approval would be denied at once by policy.
    const guest = await tab(chatId, "alice");
    const foreign = kind.request(chatKey(chatId, "other"));
    const foreignId = (await foreign.requested).id as string;
    // An approval of our own agent on the same chat, after it: once that one is handled, so was the other.
    const own = kind.request(chatKey(chatId));
    const ownId = (await own.requested).id as string;
    expect(await own.decision).toMatchObject({ decision: "deny" });
    await expect
      .poll(async () => (await server.store.get(ownId))?.status, { timeout: 10_000 })
      .toBe("denied");

    expect(await server.store.get(foreignId)).toBeNull();
    expect(server.broker.getPending(foreignId)).toBeUndefined();
    expect(guest.shown.map((a) => a.id)).not.toContain(foreignId);
    const stillPending = await requester.request<Payload[]>(kind.list, {});
    expect(stillPending.map((entry) => entry.id)).toContain(foreignId);
    // Settled by someone else: still nothing here.
    await elsewhere.request(kind.resolve, { id: foreignId, decision: "allow-once" });
    expect(await foreign.decision).toMatchObject({ decision: "allow-once" });
    expect(await server.store.get(foreignId)).toBeNull();
  });
});

describe("exec approvals: Gateway-specific fields", () => {
  it("a decision the Gateway marks unavailable is not offered; Deny stays first", async () => {
    const chatId = newChat();
    const viewer = await tab(chatId);
    const pending = requestExec(chatKey(chatId), { unavailableDecisions: ["allow-always"] });
    const requested = await pending.requested;
    const shown = await viewer.waitForShow((a) => a.id === requested.id);
    expect(shown.kind === "approval" && shown.approval.decisions).toEqual(["deny", "allow-once"]);
    expect(
      await viewer.send("ask:answer", {
        askId: requested.id,
        answer: { type: "decision", decision: "allow-always" },
      }),
    ).toMatchObject({ ok: false, error: { code: "INVALID" } });
    expect(
      await viewer.send("ask:answer", {
        askId: requested.id,
        answer: { type: "decision", decision: "allow-once" },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await pending.decision).toMatchObject({ decision: "allow-once" });
  });

  it("the run stopped (real Gateway, chat.abort): the approval card of an aborted live run closes, and it can no longer be allowed", async () => {
    const chatId = newChat();
    const sessionKey = chatKey(chatId);
    const viewer = await tab(chatId);
    // A live run that stays open: its model asks a question nobody answers.
    const runId = randomUUID();
    const blocking = {
      id: "ask_user",
      args: {
        questions: [
          {
            id: "go",
            header: "Go",
            question: "Go on?",
            options: [{ label: "Yes" }, { label: "No" }],
          },
        ],
        timeoutSeconds: 600,
      },
    };
    await requester.request("chat.send", {
      sessionKey,
      message: stubScript({ tool: blocking, then: "done" }),
      idempotencyKey: runId,
    });
    await elsewhere.waitForEvent("question.requested", (p) => p.runId === runId, 90_000);
    const pending = requestExec(sessionKey, { runId });
    const { id } = await pending.requested;
    await viewer.waitForShow((a) => a.id === id);
    await requester.request("chat.abort", { sessionKey, runId });
    await elsewhere.waitForEvent(
      "chat",
      (p) => p.runId === runId && (p.state === "aborted" || p.state === "error"),
      30_000,
    );
    const close = await viewer.waitForClose(id);
    expect(["answered-elsewhere", "cancelled", "expired"]).toContain(close.reason);
    expect((await server.store.get(id))?.status).not.toBe("pending");
    const late = await viewer.send("ask:answer", {
      askId: id,
      answer: { type: "decision", decision: "allow-once" },
    });
    expect(late.ok).toBe(false);
    await elsewhere.request("exec.approval.resolve", { id, decision: "deny" }).catch(() => {});
  });
});
