// Approvals from their real sources, in live agent runs on the REAL OpenClaw Gateway (issue 13):
// - a real plugin's `before_tool_call` (test/support/plugins/asks-approval-test, loaded by the test
//   Gateway) asks before its marker tool runs; the scripted stub model calls that tool;
// - a real exec policy (`tools.exec: {mode: "ask", host: "gateway"}`) asks before a host command runs.
// Each approval must reach the tab viewing the chat as a card, and each decision must really let the
// tool run or really block it: seen on disk (the marker file) and in the model's next request (the
// tool result the agent is given).
//
// Sessions that must not be asked, as far as the Gateway can produce them live:
// - channel thread: no channel account can run here, but a live run on a thread-shaped session key
//   (`agent:<agent>:slack:channel:<id>:thread:<ts>`) is accepted by `chat.send`, and the Gateway treats it
//   as a thread (`turnSourceThreadId` set); its approval is denied at once by this service.
// - sub-agent: the Gateway (2026.9.6) cannot produce a sub-agent's approval. A sub-agent spawned with
//   `sessions_spawn` asks through a Gateway client without `operator.approvals`, so neither a plugin
//   nor an exec approval is ever registered ("missing scope: operator.approvals" in the Gateway log)
//   and the tool call is blocked. The test below pins that down; the dashboard-only rule for
//   sub-agent approvals is covered with `plugin.approval.request` in approvals.test.ts.
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import type { ApprovalAsk, ApprovalScope, Ask } from "../../lib/ask.ts";
import { commandHeadline } from "../../lib/command-risk.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import {
  newChat,
  sessionKeyOf,
  startOnGateway,
  stopOnGateway,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import {
  fetchStubRequests,
  messageText,
  stubScript,
  type StubTool,
} from "../support/stub-model.ts";
import type { Tab, TestServer } from "../support/tabs.ts";

const stubModelUrl = inject("stubModelUrl");

const LIVE_TIMEOUT_MS = 120_000;
const WAIT_MS = 60_000;
const PLUGIN_ID = "asks-approval-test";
const MARKER_TOOL = "asks_touch_marker";

/** The person on the chat, sending messages to the session as Open WebUI would. */
let user: OperatorConnection;
let server: TestServer;
/** This file's marker files (the plugin writes only inside the system temp folder). */
let markers: string;
const { tab } = useTabs({ server: () => server });

beforeAll(async () => {
  expect(stubModelUrl, "the integration globalSetup provides a stub model").not.toBe("");
  ({ requester: user, server } = await startOnGateway({ requesterName: "open-webui-user" }));
  markers = mkdtempSync(join(tmpdir(), "asks-approvals-live-"));
});

afterAll(async () => {
  await stopOnGateway({ server, requester: user });
  rmSync(markers, { recursive: true, force: true });
});

/** A chat only this file uses, its session key, and a tag that finds its model requests. */
function freshChat() {
  const chatId = newChat("apl-live");
  return { chatId, sessionKey: sessionKeyOf(chatId), tag: `apl-${randomUUID()}` };
}

type PluginApprovalArgs = {
  title?: string;
  description?: string;
  severity?: "info" | "warning" | "critical";
  scope?: ApprovalScope;
  allowedDecisions?: string[];
  timeoutMs?: number;
};

/** A call of the plugin's marker tool; `marker` is the file it would write. */
function touch(approval?: PluginApprovalArgs): StubTool & { marker: string } {
  const marker = join(markers, `marker-${randomUUID()}`);
  return { id: MARKER_TOOL, args: { path: marker, ...(approval ? { approval } : {}) }, marker };
}

/** The user sends a script to the session: the model calls `tools`, one per turn. Returns the run id. */
async function userRuns(
  sessionKey: string,
  tag: string,
  tools: StubTool[],
  then = "All done.",
): Promise<string> {
  const runId = `run-${randomUUID()}`;
  const message = stubScript({ tools: tools.map(({ id, args }) => ({ id, args })), then, tag });
  expect(
    await user.request("chat.send", { sessionKey, message, idempotencyKey: runId }),
  ).toMatchObject({ status: "started" });
  return runId;
}

/** The next approval card on `tab` for `sessionKey` that is not one of `seen`. */
async function nextCard(
  viewer: Tab,
  sessionKey: string,
  seen: readonly Ask[] = [],
): Promise<ApprovalAsk> {
  const card = await viewer.waitFor(
    () =>
      viewer.shown.find(
        (ask) => ask.sessionKey === sessionKey && !seen.some((old) => old.id === ask.id),
      ),
    `an approval card for ${sessionKey}`,
    WAIT_MS,
  );
  expect(card.kind).toBe("approval");
  return card as ApprovalAsk;
}

async function decide(
  viewer: Tab,
  card: Ask,
  decision: "allow-once" | "allow-always" | "deny",
): Promise<void> {
  expect(
    await viewer.send("ask:answer", { askId: card.id, answer: { type: "decision", decision } }),
  ).toEqual({ ok: true, status: "answered" });
  expect(
    await viewer.waitFor(
      () => viewer.closed.find((close) => close.askId === card.id),
      `ask:close ${card.id}`,
      WAIT_MS,
    ),
  ).toMatchObject({ reason: "answered" });
}

/** The tool results in each model request that mentions `tag`, oldest request first. */
async function toolResultsByRequest(tag: string): Promise<string[][]> {
  const requests = await fetchStubRequests(stubModelUrl, tag);
  return requests.map((request) =>
    (request.body.messages ?? [])
      .filter((message) => message.role === "tool")
      .map((message) => messageText(message)),
  );
}

/** Waits until a model request carries a tool result that contains `text`; returns that result. */
function modelIsTold(tag: string, text: string): Promise<string> {
  return vi.waitFor(
    async () => {
      const results = (await toolResultsByRequest(tag)).flat();
      const found = results.find((result) => result.includes(text));
      if (found === undefined)
        throw new Error(
          `the model was never given a tool result containing ${JSON.stringify(text)}; got ${JSON.stringify(results)}`,
        );
      return found;
    },
    { timeout: WAIT_MS, interval: 200 },
  );
}

describe("plugin approvals from a real plugin's before_tool_call, in live runs", () => {
  it(
    "Allow once: the card shows on the chat's tab, the tool runs, the model gets its result, and the next call asks again",
    async () => {
      const { chatId, sessionKey, tag } = freshChat();
      const viewer = await tab(chatId);
      const first = touch();
      const second = touch();
      const runId = await userRuns(sessionKey, tag, [first, second]);

      const card = await nextCard(viewer, sessionKey);
      expect(card).toMatchObject({
        source: "gateway.plugin-approval",
        chatId,
        sessionKey,
        agentId: TEST_AGENT,
        runId,
        status: "pending",
      });
      expect(card.id).toMatch(/^plugin:/);
      expect(card.approval).toEqual({
        title: "Write a marker file",
        description: `Writes ${first.marker}`,
        severity: "warning",
        toolName: MARKER_TOOL,
        pluginId: PLUGIN_ID,
        decisions: ["deny", "allow-once", "allow-always"],
      });
      expect(existsSync(first.marker)).toBe(false);

      await decide(viewer, card, "allow-once");
      expect(
        await modelIsTold(tag, `marker written: ${first.marker} (approved with allow-once)`),
      ).toBeTruthy();
      expect(existsSync(first.marker)).toBe(true);
      expect(await server.store.get(card.id)).toMatchObject({
        status: "answered",
        resolution: { by: "owner", tabId: viewer.socket.id },
      });

      // Allow once trusted that call only: the next call of the same tool asks again.
      const again = await nextCard(viewer, sessionKey, [card]);
      expect(again.approval.description).toBe(`Writes ${second.marker}`);
      expect(existsSync(second.marker)).toBe(false);
      await decide(viewer, again, "deny");
      await modelIsTold(tag, "Denied by user");
      expect(existsSync(second.marker)).toBe(false);
    },
    LIVE_TIMEOUT_MS,
  );

  it(
    "Always allow: the tool runs and the plugin hears allow-always, but the Gateway keeps no trust for plugins: the next call asks again",
    async () => {
      const { chatId, sessionKey, tag } = freshChat();
      const viewer = await tab(chatId);
      const first = touch();
      const second = touch();
      await userRuns(sessionKey, tag, [first, second]);

      const card = await nextCard(viewer, sessionKey);
      await decide(viewer, card, "allow-always");
      // The plugin's onResolution got "allow-always"; its tool reports that in the result.
      await modelIsTold(tag, `marker written: ${first.marker} (approved with allow-always)`);
      expect(existsSync(first.marker)).toBe(true);

      const again = await nextCard(viewer, sessionKey, [card]);
      expect(again.approval.toolName).toBe(MARKER_TOOL);
      await decide(viewer, again, "allow-once");
      await modelIsTold(tag, `marker written: ${second.marker} (approved with allow-once)`);
      expect(existsSync(second.marker)).toBe(true);
    },
    LIVE_TIMEOUT_MS,
  );

  it(
    "Deny: only the offered decisions are shown, the tool does not run, and the agent is told it was denied",
    async () => {
      const { chatId, sessionKey, tag } = freshChat();
      const viewer = await tab(chatId);
      const call = touch({
        title: "Delete the staging database",
        description: "Drops every table in staging.",
        allowedDecisions: ["allow-once", "deny"],
      });
      await userRuns(sessionKey, tag, [call]);

      const card = await nextCard(viewer, sessionKey);
      expect(card.approval).toMatchObject({
        title: "Delete the staging database",
        description: "Drops every table in staging.",
        decisions: ["deny", "allow-once"],
      });
      expect(
        await viewer.send("ask:answer", {
          askId: card.id,
          answer: { type: "decision", decision: "allow-always" },
        }),
      ).toMatchObject({ ok: false, error: { code: "INVALID" } });
      await decide(viewer, card, "deny");

      const told = await modelIsTold(tag, "Denied by user");
      expect(told).toContain("The tool call did not run");
      expect(existsSync(call.marker)).toBe(false);
    },
    LIVE_TIMEOUT_MS,
  );

  it(
    "No answer: the plugin's own timeout ends it, the card closes as expired, and the tool does not run",
    async () => {
      const { chatId, sessionKey, tag } = freshChat();
      const viewer = await tab(chatId);
      const call = touch({ timeoutMs: 5_000 });
      await userRuns(sessionKey, tag, [call]);

      const card = await nextCard(viewer, sessionKey);
      expect(card.expiresAt! - card.createdAt).toBe(5_000);
      expect(
        await viewer.waitFor(
          () => viewer.closed.find((close) => close.askId === card.id),
          "the card to close",
          WAIT_MS,
        ),
      ).toMatchObject({ reason: "expired" });
      expect((await server.store.get(card.id))?.status).toBe("expired");

      expect(await modelIsTold(tag, "Approval timed out")).toBeTruthy();
      expect(existsSync(call.marker)).toBe(false);
      const late = await viewer.send("ask:answer", {
        askId: card.id,
        answer: { type: "decision", decision: "allow-once" },
      });
      expect(late).toMatchObject({ ok: false, error: { code: "EXPIRED" } });
    },
    LIVE_TIMEOUT_MS,
  );

  it(
    "each kind of scope a plugin declares (payment, message-send, external-post) arrives on the card, with its severity",
    async () => {
      const { chatId, sessionKey, tag } = freshChat();
      const viewer = await tab(chatId);
      const declared: {
        title: string;
        severity: "info" | "warning" | "critical";
        scope: ApprovalScope;
      }[] = [
        {
          title: "Pay invoice",
          severity: "critical",
          scope: { kind: "payment", amount: "49.99", currency: "EUR", target: "Stripe" },
        },
        {
          title: "Send customer update",
          severity: "warning",
          scope: {
            kind: "message-send",
            target: "email",
            recipientCount: 3,
            recipients: ["alice@example.com", "bob@example.com"],
            audience: "external",
          },
        },
        {
          title: "Publish announcement",
          severity: "info",
          scope: { kind: "external-post", target: "github", visibility: "public" },
        },
      ];
      await userRuns(
        sessionKey,
        tag,
        declared.map((approval) => touch({ ...approval, description: approval.title })),
      );

      const cards: ApprovalAsk[] = [];
      for (const approval of declared) {
        const card = await nextCard(viewer, sessionKey, cards);
        cards.push(card);
        expect(card.approval).toMatchObject({
          title: approval.title,
          severity: approval.severity,
          scope: approval.scope,
        });
        await decide(viewer, card, "deny");
      }
      await modelIsTold(tag, "Denied by user");
      expect((await toolResultsByRequest(tag)).at(-1)).toHaveLength(3);
    },
    LIVE_TIMEOUT_MS,
  );
});

describe("exec approvals from a real exec policy (tools.exec mode ask, host gateway), in live runs", () => {
  const exec = (command: string): StubTool => ({
    id: "exec",
    args: { command, host: "gateway", ask: "always" },
  });

  it(
    "the card shows the command; Allow once runs it and the model gets its output",
    async () => {
      const { chatId, sessionKey, tag } = freshChat();
      const viewer = await tab(chatId);
      const word = `asks-exec-${randomUUID()}`;
      const runId = await userRuns(sessionKey, tag, [exec(`echo ${word}`)]);

      const card = await nextCard(viewer, sessionKey);
      expect(card).toMatchObject({
        source: "gateway.exec-approval",
        chatId,
        sessionKey,
        agentId: TEST_AGENT,
        runId,
        status: "pending",
      });
      expect(card.approval).toMatchObject({
        title: `Run ${commandHeadline(`echo ${word}`)}`,
        command: `echo ${word}`,
        severity: "warning",
      });
      expect(card.approval.description).toMatch(
        /^The agent wants to run a command on gateway in \//,
      );
      // `ask: "always"` makes Always allow unavailable: the Gateway would keep asking anyway.
      expect(card.approval.decisions).toEqual(["deny", "allow-once"]);

      await decide(viewer, card, "allow-once");
      // The tool result is the command's output, nothing else.
      expect((await modelIsTold(tag, word)).trim()).toBe(word);
    },
    LIVE_TIMEOUT_MS,
  );

  it(
    "Deny blocks the command: it never runs and the model is told it was denied",
    async () => {
      const { chatId, sessionKey, tag } = freshChat();
      const viewer = await tab(chatId);
      const marker = join(markers, `exec-${randomUUID()}`);
      await userRuns(sessionKey, tag, [exec(`touch ${marker}`)]);

      const card = await nextCard(viewer, sessionKey);
      expect(card.approval.command).toBe(`touch ${marker}`);
      await decide(viewer, card, "deny");

      const told = await modelIsTold(tag, "Exec denied");
      expect(told).toContain("user-denied");
      expect(existsSync(marker)).toBe(false);
    },
    LIVE_TIMEOUT_MS,
  );
});

describe("sessions that must not be asked, from live runs", () => {
  it(
    "§6 session is a channel thread: a live run's plugin approval is denied at once, no tab gets a card, the tool does not run",
    async () => {
      const { chatId, tag } = freshChat();
      const viewer = await tab(chatId);
      const dashboard = await tab(null);
      expect(await dashboard.send("asks:watch", {})).toEqual({ ok: true });
      const threadKey = `agent:${TEST_AGENT}:slack:channel:${chatId}:thread:1717171717.000100`;
      const call = touch();
      await userRuns(threadKey, tag, [call]);

      const requested = await user.waitForEvent(
        "plugin.approval.requested",
        (payload) => payload.request?.sessionKey === threadKey,
        WAIT_MS,
      );
      expect(requested.request.turnSourceThreadId).toBe("1717171717.000100");
      expect(await modelIsTold(tag, "Denied by user")).toBeTruthy();
      expect(existsSync(call.marker)).toBe(false);

      expect(await server.store.get(requested.id)).toMatchObject({ status: "denied" });
      expect(viewer.shown.map((ask) => ask.id)).not.toContain(requested.id);
      expect(dashboard.shown.map((ask) => ask.id)).not.toContain(requested.id);
    },
    LIVE_TIMEOUT_MS,
  );

  it(
    "§6 session is a sub-agent: the Gateway does not let a sub-agent ask (its tool call is blocked before any approval exists)",
    async () => {
      const { chatId, sessionKey, tag } = freshChat();
      const viewer = await tab(chatId);
      const dashboard = await tab(null);
      expect(await dashboard.send("asks:watch", {})).toEqual({ ok: true });
      const call = touch();
      const execMarker = join(markers, `sub-exec-${randomUUID()}`);
      const subTools = [
        { id: call.id, args: call.args },
        { id: "exec", args: { command: `touch ${execMarker}`, host: "gateway", ask: "always" } },
      ];
      const task = stubScript({ tools: subTools, then: "Sub-agent done.", tag: `${tag}-sub` });
      await userRuns(sessionKey, tag, [{ id: "sessions_spawn", args: { task, label: tag } }]);

      // The sub-agent's own model requests carry the blocked calls' results: they come after any approval would have.
      expect(
        await modelIsTold(`${tag}-sub`, "Plugin approval required (gateway unavailable)"),
      ).toContain("error");
      expect(await modelIsTold(`${tag}-sub`, "Exec approval registration failed")).toBeTruthy();
      expect(existsSync(execMarker)).toBe(false);
      const spawned = await modelIsTold(tag, "childSessionKey");
      const childSessionKey = new RegExp(`agent:${TEST_AGENT}:subagent:[0-9a-f-]+`).exec(
        spawned,
      )?.[0];
      expect(childSessionKey).toMatch(new RegExp(`^agent:${TEST_AGENT}:subagent:`));

      expect(existsSync(call.marker)).toBe(false);
      expect(
        user.events.filter(
          (event) =>
            /^(plugin|exec)\.approval\.requested$/.test(event.event) &&
            event.payload.request?.sessionKey === childSessionKey,
        ),
      ).toEqual([]);
      expect(
        (await server.store.list({ limit: 100_000 })).filter(
          (ask) => ask.sessionKey === childSessionKey,
        ),
      ).toEqual([]);
      expect(dashboard.changed.filter((ask) => ask.sessionKey === childSessionKey)).toEqual([]);
      expect(viewer.shown).toEqual([]);
    },
    LIVE_TIMEOUT_MS,
  );
});
