import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TAB_PROTOCOL_VERSION } from "../../lib/protocol-version.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import {
  newChat as chat,
  requestQuestion,
  sessionKeyOf,
  startOnGateway,
  stopOnGateway,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import { TEST_OWNER, type TestServer, waitConnected } from "../support/tabs.ts";

/** The walking skeleton against a real OpenClaw Gateway: question → newest tab → answer → Gateway. */

let requester: OperatorConnection;
let server: TestServer;
const { tab } = useTabs({ server: () => server });

const ask = async (chatId: string, agent = TEST_AGENT): Promise<string> =>
  (await requestQuestion(requester, sessionKeyOf(chatId, agent))).id;

beforeAll(async () => {
  ({ requester, server } = await startOnGateway());
});

afterAll(() => stopOnGateway({ server, requester }));

describe("spine against the real Gateway", () => {
  it("shows a question on the viewing tab and delivers its answer to the requester", async () => {
    const chatId = chat();
    const viewer = await tab(chatId);
    const id = await ask(chatId);
    const shown = await viewer.waitForShow((a) => a.id === id);
    expect(shown).toMatchObject({
      kind: "question",
      source: "gateway.question",
      chatId,
      agentId: TEST_AGENT,
      status: "pending",
    });
    expect(shown.kind === "question" && shown.questions[0]).toMatchObject({
      id: "db",
      header: "Database",
      allowOther: true,
      options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }],
    });

    const waiting = requester.request<any>("question.waitAnswer", { id });
    expect(
      await viewer.send("ask:answer", {
        askId: id,
        answer: { type: "questions", answers: { db: ["SQLite"] } },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await waiting).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["SQLite"] } },
    });
    expect(await viewer.waitForClose(id)).toEqual({
      askId: id,
      reason: "answered",
      summary: "SQLite",
    });
  });

  it("sends a typed answer through Other", async () => {
    const chatId = chat();
    const viewer = await tab(chatId);
    const id = await ask(chatId);
    await viewer.waitForShow((a) => a.id === id);
    const waiting = requester.request<any>("question.waitAnswer", { id });
    expect(
      await viewer.send("ask:answer", { askId: id, answer: { type: "text", text: "DuckDB" } }),
    ).toMatchObject({ ok: true });
    expect(await waiting).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["DuckDB"] } },
    });
  });

  it("cancels: the agent hears cancelled", async () => {
    const chatId = chat();
    const viewer = await tab(chatId);
    const id = await ask(chatId);
    await viewer.waitForShow((a) => a.id === id);
    const waiting = requester.request<any>("question.waitAnswer", { id });
    expect(await viewer.send("ask:answer", { askId: id, answer: { type: "cancel" } })).toEqual({
      ok: true,
      status: "cancelled",
    });
    expect(await waiting).toMatchObject({ status: "cancelled" });
    expect(await viewer.waitForClose(id)).toMatchObject({ reason: "cancelled" });
  });

  it("closes the card when the question is answered elsewhere", async () => {
    const chatId = chat();
    const viewer = await tab(chatId);
    const id = await ask(chatId);
    await viewer.waitForShow((a) => a.id === id);
    await requester.request("question.resolve", { id, answers: { answers: { db: ["Postgres"] } } });
    expect(await viewer.waitForClose(id)).toEqual({
      askId: id,
      reason: "answered-elsewhere",
      summary: "Postgres",
    });
    expect(
      await viewer.send("ask:answer", { askId: id, answer: { type: "text", text: "SQLite" } }),
    ).toMatchObject({ ok: false, error: { code: "ALREADY_RESOLVED" } });
  });

  it("keeps a question pending with no tab and shows it when a tab views the chat", async () => {
    const chatId = chat();
    const id = await ask(chatId);
    await expect
      .poll(() => server.broker.getPending(id)?.status, { timeout: 30_000 })
      .toBe("pending");
    const late = await tab(chatId);
    expect((await late.waitForShow((a) => a.id === id)).id).toBe(id);
  });

  it("moves the card to a newer tab and tells the older one it was handed off", async () => {
    const chatId = chat();
    const older = await tab(chatId);
    const id = await ask(chatId);
    await older.waitForShow((a) => a.id === id);
    const newer = await tab(chatId);
    await newer.waitForShow((a) => a.id === id);
    expect(await older.waitForClose(id)).toEqual({ askId: id, reason: "handed-off" });
  });

  it("never shows a session of another agent", async () => {
    const chatId = chat();
    const viewer = await tab(chatId);
    const otherId = await ask(chatId, "other");
    const ownId = await ask(chatId);
    await viewer.waitForShow((a) => a.id === ownId);
    expect(viewer.shown.map((a) => a.id)).not.toContain(otherId);
    expect(server.broker.getPending(otherId)).toBeUndefined();
    await requester.request("question.resolve", { id: otherId, cancel: true });
  });

  it("answers an invalid ask:answer with INVALID and changes nothing", async () => {
    const chatId = chat();
    const viewer = await tab(chatId);
    const id = await ask(chatId);
    await viewer.waitForShow((a) => a.id === id);
    const bad = await viewer.sendRaw("ask:answer", {
      askId: id,
      answer: { type: "questions", answers: "SQLite" },
    });
    expect(bad).toMatchObject({
      ok: false,
      error: { code: "INVALID", message: expect.stringContaining("answer") },
    });
    expect(await viewer.sendRaw("ask:answer", { nope: true })).toMatchObject({
      ok: false,
      error: { code: "INVALID" },
    });
    expect(server.broker.getPending(id)?.status).toBe("pending");
    const record = await requester.request<any>("question.get", { id });
    expect(JSON.stringify(record)).toContain('"pending"');
  });

  it("refuses a forged token at connect", async () => {
    const forged = io(server.url, {
      auth: { token: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvd25lciJ9.forged" },
      transports: ["websocket"],
      reconnection: false,
      forceNew: true,
    });
    const error = await new Promise<Error>((resolve) => forged.once("connect_error", resolve));
    forged.close();
    expect(error.message).toMatch(/token/);
  });

  it("refuses a page of another tab protocol at connect, whatever its token, and says to reload it", async () => {
    const token = await server.token(TEST_OWNER, chat());
    const connectError = async (protocol: unknown, { auth = token } = {}) => {
      const socket = io(server.url, {
        auth: { token: auth, protocol },
        transports: ["websocket"],
        reconnection: false,
        forceNew: true,
      });
      const error = await new Promise<Error & { data?: unknown }>((resolve) =>
        socket.once("connect_error", resolve),
      );
      socket.close();
      return error;
    };
    const newer = await connectError(TAB_PROTOCOL_VERSION + 1);
    expect(newer.data).toEqual({
      code: "INCOMPATIBLE_PROTOCOL",
      serverProtocol: TAB_PROTOCOL_VERSION,
    });
    expect(newer.message).toMatch(/older release than this page.*reload the page$/);
    const garbled = await connectError("1; DROP");
    expect(garbled.data).toEqual({
      code: "INCOMPATIBLE_PROTOCOL",
      serverProtocol: TAB_PROTOCOL_VERSION,
    });
    expect(garbled.message).toMatch(/no tab protocol version.*reload the page$/);
    // The version comes first: a page of another release is told to reload, not that its token is bad.
    expect((await connectError(0, { auth: "forged" })).data).toMatchObject({
      code: "INCOMPATIBLE_PROTOCOL",
    });
  });

  it("takes a page that names no tab protocol as version 1, the protocol before it carried a number", async () => {
    const chatId = chat();
    const socket = io(server.url, {
      auth: { token: await server.token(TEST_OWNER, chatId) },
      transports: ["websocket"],
      reconnection: false,
      forceNew: true,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("connect_error", reject);
    });
    expect(await socket.timeout(20_000).emitWithAck("chat:view", { chatId })).toMatchObject({
      ok: true,
    });
    socket.close();
  });

  it("reports the Gateway status to every tab on connect", async () => {
    const viewer = await tab(null);
    await viewer.waitFor(() => viewer.statuses[0], "gateway:status");
    expect(viewer.statuses[0]).toMatchObject({ connected: true });
  });
});

describe("restart against the real Gateway", () => {
  it("restores a pending question after a restart and does not revive one answered meanwhile", async () => {
    const chatId = chat();
    const stays = await ask(chatId);
    const answered = await ask(chatId);
    await expect
      .poll(() => server.broker.getPending(answered)?.status, { timeout: 30_000 })
      .toBe("pending");
    await server.stop();
    await requester.request("question.resolve", {
      id: answered,
      answers: { answers: { db: ["SQLite"] } },
    });
    server = await server.restart();
    await waitConnected(server);
    const viewer = await tab(chatId);
    await viewer.waitForShow((a) => a.id === stays);
    await expect
      .poll(async () => (await server.store.get(answered))?.status, { timeout: 30_000 })
      .toBe("answered");
    expect(viewer.shown.map((a) => a.id)).not.toContain(answered);
  });
});
