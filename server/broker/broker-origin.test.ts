// Deny by default (docs/SECURITY.md#whose-run-asks) on the broker alone (test/support/broker-harness.ts):
// approvals and secret requests are asked only in a run an owner started. A reply on the Gateway's
// `/v1` is its starter's, as the filter's signed reply start said; a `/v1` run no reply start vouches
// for is nobody's; any other session is judged as before. Every ask says whose run it is (`origin`).
import { describe, expect } from "vitest";
import { approval, question, secret, T0 } from "../../test/support/ask-fixtures.ts";
import { brokerTest, tab, widget } from "../../test/support/broker-harness.ts";
import { AskBroker } from "./broker.ts";

const REFUSED_APPROVAL =
  "Denied: no owner started this run in an Open WebUI chat (a temporary chat, a background task or a direct /v1 request)";
const REFUSED_SECRET =
  "Cancelled: secrets are asked only in runs an owner started, and no owner started this one in an Open WebUI chat";

/** The filter's session of reply `reply` of chat `chat` on the Gateway's `/v1`, as intake maps it. */
const onV1 = (chat: string, reply: string) => ({
  sessionKey: `agent:dev:openai-user:openwebui:${chat}:${reply}`,
  runId: "chatcmpl_1",
  replyId: reply,
});

const it = brokerTest.extend(
  "permissive",
  ({ store, presence, channel, clock }) =>
    new AskBroker({
      store,
      presence,
      source: channel,
      clock,
      owners: new Set(["owner"]),
      allowUnvouched: true,
      instanceId: "one",
      log: () => {},
    }),
);

describe("§6 the run was not started by an owner (deny by default)", () => {
  it("a /v1 reply an owner started: its approval and secret request are shown in its widget, and say whose run asked", async ({
    store,
    broker,
    tabs,
  }) => {
    await broker.replyStarted({
      chatId: "c1",
      userId: "owner",
      userName: "Olive Owner",
      reply: { msg: "m1", mts: T0 },
    });
    await broker.view(widget("w1", "c1", "m1", 0), "c1");
    await broker.receive(approval("p1", "c1", onV1("c1", "m1")));
    await broker.receive(secret("s1", "c1", onV1("c1", "m1")));
    expect(tabs.shownOn("w1")).toEqual(["p1", "s1"]);
    expect((await store.get("p1"))?.origin).toEqual({
      kind: "reply",
      userId: "owner",
      name: "Olive Owner",
    });
  });

  it.for([
    ["a temporary chat (no `user`)", null, "agent:dev:openai:3f2a"],
    [
      "a background task (the filter's unvouched session)",
      null,
      "agent:dev:openai-user:openwebui-task:77",
    ],
    [
      "a request with its own `user` naming the owner's chat and a reply nobody started",
      "c1",
      "agent:dev:openai-user:openwebui:c1:forged",
    ],
    [
      "a reply id no reply start names, on a Pipe-like key from a header",
      "c1",
      "agent:dev:openwebui:c1",
    ],
  ] as const)(
    "a /v1 run no reply start vouches for, %s: approval denied and secret cancelled at once, saying why; a question is asked",
    async ([, chatId, sessionKey], { store, channel, broker, tabs }) => {
      await broker.replyStarted({ chatId: "c1", userId: "owner", reply: { msg: "m1", mts: T0 } });
      await broker.view(tab("dash"), "c1");
      const run = { sessionKey, runId: "chatcmpl_9", replyId: chatId ? "forged" : undefined };
      await broker.receive(approval("p1", chatId, run));
      await broker.receive(secret("s1", chatId, run));
      await broker.receive(question("q1", chatId, run));
      expect(channel.refused).toEqual(["p1", "s1"]);
      expect(await store.get("p1")).toMatchObject({
        status: "denied",
        resolution: { summary: REFUSED_APPROVAL },
        origin: { kind: "unvouched" },
      });
      expect((await store.get("s1"))?.resolution?.summary).toBe(REFUSED_SECRET);
      expect(broker.getPending("q1")?.origin).toEqual({ kind: "unvouched" });
      expect(tabs.timeline.filter((entry) => entry.askId !== "q1")).toEqual([]);
    },
  );

  it("a reply a guest started, in a chat the owner owns: its approval is denied as a guest's, whoever owns the chat", async ({
    channel,
    broker,
  }) => {
    await broker.replyStarted({ chatId: "c1", userId: "owner", reply: { msg: "m1", mts: T0 } });
    await broker.replyStarted({ chatId: "c1", userId: "guest", reply: { msg: "m2", mts: T0 + 5 } });
    await broker.receive(approval("p1", "c1", onV1("c1", "m2")));
    await broker.receive(approval("p2", "c1", onV1("c1", "m1")));
    expect(channel.refused).toEqual(["p1"]);
    expect(broker.getPending("p2")?.origin).toMatchObject({ kind: "reply", userId: "owner" });
  });

  it("a guest's first reply in a chat nobody recorded yet records the owner Open WebUI names, never the guest", async ({
    store,
    channel,
    broker,
  }) => {
    await broker.replyStarted({
      chatId: "c1",
      userId: "guest",
      chatOwnerId: "owner",
      reply: { msg: "m1", mts: T0 },
    });
    expect(await store.chatOwner("c1")).toBe("owner");
    await broker.receive(approval("p1", "c1", onV1("c1", "m1")));
    expect(channel.refused).toEqual(["p1"]);
    // A filter before 0.5.0 names no chat owner: the reply's user is recorded, as before.
    await broker.replyStarted({ chatId: "c2", userId: "guest", reply: { msg: "m2", mts: T0 } });
    expect(await store.chatOwner("c2")).toBe("guest");
  });

  it("a reply start vouches for a day: a run of a reply started longer ago is nobody's", async ({
    clock,
    channel,
    broker,
  }) => {
    await broker.replyStarted({ chatId: "c1", userId: "owner", reply: { msg: "m1", mts: T0 } });
    clock.advance(24 * 3_600_000 + 1);
    await broker.receive(approval("p1", "c1", { ...onV1("c1", "m1"), expiresAt: null }));
    expect(channel.refused).toEqual(["p1"]);
  });

  it.for([
    ["the Gateway's main session (its Control UI)", "agent:dev:main", "main"],
    ["a channel of the Gateway's own", "agent:dev:telegram:direct:42", "telegram"],
  ] as const)(
    "%s: asked on the dashboard, and says where it came from",
    async ([, sessionKey, channelName], { channel, broker }) => {
      await broker.receive(approval("p1", null, { sessionKey }));
      expect(channel.refused).toEqual([]);
      expect(broker.getPending("p1")?.origin).toEqual({ kind: "session", channel: channelName });
    },
  );

  it("ALLOW_UNVOUCHED_RUNS: a /v1 run of the operator's own client is asked, on the dashboard", async ({
    channel,
    permissive,
  }) => {
    await permissive.receive(
      approval("p1", null, { sessionKey: "agent:dev:openai:1", runId: "chatcmpl_2" }),
    );
    expect(channel.refused).toEqual([]);
    expect(permissive.getPending("p1")?.origin).toEqual({ kind: "unvouched" });
  });

  it("a Pipe session (`agent:<agent>:openwebui:<chat>`) is judged by its chat's recorded user, as before", async ({
    channel,
    broker,
  }) => {
    await broker.view(tab("guest", "alice", "c1"), "c1");
    await broker.receive(approval("p1", "c1"));
    await broker.receive(approval("p2", "c2"));
    expect(channel.refused).toEqual(["p1"]);
    expect(broker.getPending("p2")?.origin).toEqual({ kind: "session", channel: "openwebui" });
  });
});
