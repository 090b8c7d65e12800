import { mkdtempSync, rmSync } from "node:fs";
import type { Agent } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { io } from "socket.io-client";
import { vi } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { type Clock, systemClock } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import type {
  AskClose,
  ClientEvent,
  ClientEvents,
  InstanceStatus,
  WidgetSuperseded,
} from "../../lib/protocol.ts";
import { type Application, createApplication } from "../../server/app.ts";
import { mintOwnerLink } from "../../server/auth/owner-links.ts";
import { mintActToken, mintTabToken, secretKey } from "../../server/auth/tokens.ts";
import type { Presence, ReplyClaim } from "../../server/broker/ports.ts";
import { type Config, parseConfig } from "../../server/config.ts";
import { gatewayFromConfig } from "../../server/gateway/gateway.ts";
import { openBackend } from "../../server/store/backend.ts";
import { TEST_REPLY } from "./replies.ts";
import { emitWithAck, type TypedSocket, untyped } from "./typed-ack.ts";

/**
 * The product server started in-process (no UI) on an ephemeral port, and real socket.io-client tabs
 * that record what they receive, for two-client tests in the socket.io CRUD-example style.
 */

export const TEST_AUTH_SECRET = "test-secret-test-secret-test-secret-0123456789";
/** The one user in OWNER_USERS of the test configuration. */
export const TEST_OWNER = "owner";

export type TestServer = Application & {
  dataDir: string;
  logs: string[];
  /**
   * With `chat`, an embed token of `reply` (by default every test's embed tokens are one reply's, so
   * live); `null` mints one as the first filter did, with no reply.
   */
  token(userId?: string, chat?: string, reply?: ReplyClaim | null): Promise<string>;
  /** The act token the server gives the filter for a reply's user (docs/SECURITY.md#a-stored-token-never-acts). */
  actToken(userId: string, chat: string, reply?: ReplyClaim): Promise<string>;
  /**
   * A reply's widget as the person who sent the message has it: its embed token, and the act token the
   * filter handed their page, which it answers with. `{ act: false }`: a widget opened from the stored
   * URL alone (a share, a reload), which only views.
   */
  widget(
    userId: string,
    chat: string,
    reply?: ReplyClaim | null,
    options?: { act?: boolean },
  ): Promise<Tab>;
  /** The token of an owner link as `npm run owner-link` prints it: it carries the store's current key id (`kid`), so `--revoke` ends it. */
  ownerLink(userId?: string): Promise<string>;
  restart(): Promise<TestServer>;
  dispose(): Promise<void>;
};

/** The configuration tests and the benchmark run the server with: agent `dev`, owner `owner`, port 0. */
export function testConfig(
  gatewayUrl: string,
  gatewayToken: string,
  dataDir: string,
  env: Record<string, string> = {},
): Config {
  return parseConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    AGENT_ID: "dev",
    OWNER_USERS: TEST_OWNER,
    OPENCLAW_GATEWAY_URL: gatewayUrl,
    OPENCLAW_GATEWAY_TOKEN: gatewayToken,
    ...env,
  });
}

/**
 * The application as production wires it (SQLite under DATA_DIR, or Redis with REDIS_URL; the
 * configured Gateway), without the UI. `presence` stands in for a one-process backend's own (the
 * benchmark counts the tabs of a MemoryPresence it holds).
 */
export async function startApplication(
  config: Config,
  authSecret: string,
  log: (line: string) => void,
  parts: { clock?: Clock; presence?: Presence; pushAgent?: Agent } = {},
): Promise<Application> {
  const clock = parts.clock ?? systemClock();
  const backend = await openBackend(config, authSecret, { log, clock });
  return createApplication({
    config,
    authSecret,
    clock,
    log,
    backend: parts.presence ? { ...backend, presence: parts.presence } : backend,
    gateway: gatewayFromConfig(config, { clock, log }),
    pushAgent: parts.pushAgent,
  });
}

export async function startTestServer(options: {
  gatewayUrl: string;
  gatewayToken: string;
  env?: Record<string, string>;
  dataDir?: string;
  clock?: Clock;
  pushAgent?: Agent;
}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), "asks-test-"));
  const config = testConfig(options.gatewayUrl, options.gatewayToken, dataDir, options.env);
  const logs: string[] = [];
  const clock = options.clock ?? systemClock();
  const server = await startApplication(config, TEST_AUTH_SECRET, (line) => logs.push(line), {
    clock,
    pushAgent: options.pushAgent,
  });
  const key = secretKey(TEST_AUTH_SECRET);
  const token = (userId = TEST_OWNER, chat?: string, reply: ReplyClaim | null = TEST_REPLY) =>
    mintTabToken(key, {
      userId,
      chat,
      reply: chat ? (reply ?? undefined) : undefined,
      ttlSeconds: 3600,
      now: clock.now(),
    });
  const actToken = (userId: string, chat: string, reply: ReplyClaim = TEST_REPLY) =>
    mintActToken(key, { userId, chat, reply, ttlSeconds: 3600, now: clock.now() });
  return {
    ...server,
    dataDir,
    logs,
    token,
    actToken,
    widget: async (userId, chat, reply = TEST_REPLY, { act = true } = {}) =>
      openTab(
        server.url,
        await token(userId, chat, reply),
        act && reply ? await actToken(userId, chat, reply) : undefined,
      ),
    ownerLink: async (userId = TEST_OWNER) =>
      new URL(
        (
          await mintOwnerLink({
            store: server.store,
            key,
            owner: userId,
            hours: 1,
            baseUrl: server.url,
          })
        ).url,
      ).searchParams.get("token")!,
    async restart() {
      await server.stop();
      return startTestServer({ ...options, dataDir });
    },
    async dispose() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until `target` is connected to its Gateway; throws with the server's log after `timeoutMs`. */
export async function waitConnected(target: TestServer, timeoutMs = 30_000): Promise<void> {
  await vi.waitFor(
    () => {
      if (!target.gateway.status.connected)
        throw new Error(`server never connected to the Gateway: ${target.logs.join("\n")}`);
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

export type Tab = {
  socket: TypedSocket;
  shown: Ask[];
  closed: AskClose[];
  changed: Ask[];
  statuses: InstanceStatus[];
  /** `widget:superseded` events: a newer reply's widget is the chat's live one. */
  superseded: WidgetSuperseded[];
  /** Emits and resolves with the ack. */
  send<E extends ClientEvent>(
    event: E,
    payload: ClientEvents[E]["payload"],
  ): Promise<ClientEvents[E]["ack"]>;
  /** Emits what a faulty or hostile client might send, to see it refused. */
  sendRaw(event: ClientEvent, payload: unknown): Promise<unknown>;
  /** `asks:list` that must succeed: its asks. */
  list(status?: ClientEvents["asks:list"]["payload"]["status"]): Promise<Ask[]>;
  waitFor<T>(
    read: () => T | undefined | Promise<T | undefined>,
    what: string,
    timeoutMs?: number,
  ): Promise<T>;
  waitForShow(predicate?: (ask: Ask) => boolean): Promise<Ask>;
  waitForClose(askId: string): Promise<AskClose>;
  close(): void;
};

/** Whether the token signs in as an owner (`asks:watch` works), or why not; an opened tab goes into `opened` for closing. */
export async function watchesAsOwner(url: string, token: string, opened: Tab[]): Promise<string> {
  try {
    const tab = await openTab(url, token);
    opened.push(tab);
    const watch = await tab.send("asks:watch", {});
    return watch.ok ? "owner" : watch.error.code;
  } catch (error) {
    return errorMessage(error);
  }
}

/** `act`: the act token this tab answers with (a widget's), added to each `ask:answer` that names none. */
function withAct<P>(event: string, payload: P, act: string | undefined): P {
  if (event !== "ask:answer" || act === undefined) return payload;
  return { act, ...payload };
}

export async function openTab(url: string, token: string, act?: string): Promise<Tab> {
  const socket: TypedSocket = io(url, {
    auth: { token },
    transports: ["websocket"],
    reconnection: false,
    forceNew: true,
  });
  const tab: Tab = {
    socket,
    shown: [],
    closed: [],
    changed: [],
    statuses: [],
    superseded: [],
    send: (event, payload) => emitWithAck(socket, event, withAct(event, payload, act), 20_000),
    sendRaw: (event, payload) => untyped(socket).timeout(20_000).emitWithAck(event, payload),
    async list(status) {
      const ack = await tab.send("asks:list", status ? { status } : {});
      if (!ack.ok) throw new Error(`asks:list failed: ${ack.error.code} ${ack.error.message}`);
      return ack.asks;
    },
    waitFor: (read, what, timeoutMs = 30_000) =>
      vi.waitFor(
        async () => {
          const value = await read();
          if (value === undefined) throw new Error(`timed out waiting for ${what}`);
          return value;
        },
        { timeout: timeoutMs, interval: 20 },
      ),
    waitForShow: (predicate = () => true) =>
      tab.waitFor(() => tab.shown.find(predicate), "ask:show"),
    waitForClose: (askId) =>
      tab.waitFor(() => tab.closed.find((close) => close.askId === askId), `ask:close ${askId}`),
    close: () => socket.close(),
  };
  socket.on("ask:show", (ask) => tab.shown.push(ask));
  socket.on("ask:close", (close) => tab.closed.push(close));
  socket.on("ask:changed", (ask) => tab.changed.push(ask));
  socket.on("gateway:status", (status) => tab.statuses.push(status));
  socket.on("widget:superseded", (superseded) => tab.superseded.push(superseded));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", (error) => reject(error));
  });
  return tab;
}
