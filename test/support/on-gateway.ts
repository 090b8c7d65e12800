// What the integration tests (and the e2e fixtures) share: unique chats and their session keys, asks
// created at a Gateway the way an agent creates them, tabs that view a chat, and the server started
// against the real Gateway (the integration globalSetup's) or a fake one. Vitest only: it uses
// `inject`, `expect` and `afterEach` (test/bench must not import it).
import { randomUUID } from "node:crypto";
import type { Agent } from "node:https";
import { afterEach, expect, inject } from "vitest";
import type { Clock } from "../../lib/clock.ts";
import { type FakeGateway, type FakeGatewayOptions, startFakeGateway } from "./fake-gateway.ts";
import { agentOfRunningFile } from "./file-agent.ts";
import { connectOperator, type OperatorConnection, type Payload } from "./gateway-client.ts";
import {
  openTab,
  startTestServer,
  type Tab,
  TEST_OWNER,
  type TestServer,
  waitConnected,
} from "./tabs.ts";

/** A chat id no other test (or test file sharing the Gateway) uses. */
export const newChat = (prefix = "chat"): string => `${prefix}-${randomUUID()}`;

/**
 * This test file's agent: the AGENT_ID of the servers it starts and the agent of its session keys.
 * Each file has its own, so files sharing the real Gateway never see each other's asks.
 */
export const TEST_AGENT = agentOfRunningFile(runningTestFile());

function runningTestFile(): string | undefined {
  try {
    return expect.getState().testPath;
  } catch {
    return undefined; // not under Vitest: a script run by node (`npm run screenshots`) uses the default agent
  }
}

/** The session key of an Open WebUI chat (the server's default SESSION_KEY_PATTERN). */
export const sessionKeyOf = (chatId: string, agent = TEST_AGENT): string =>
  `agent:${agent}:openwebui:${chatId}`;

/** For a call a test may abandon when it fails: its rejection must not become an unhandled one. */
export function silence<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

// ---------------------------------------------------------------------------------------------
// Asks created at the Gateway, as an agent's tools create them
// ---------------------------------------------------------------------------------------------

export type QuestionSpec = {
  questionId: string;
  header: string;
  question: string;
  options: { label: string; description?: string }[];
  isOther?: boolean;
  multiSelect?: boolean;
};

export const DB_QUESTION: QuestionSpec = {
  questionId: "db",
  header: "Database",
  question: "Which database?",
  options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }],
  isOther: true,
};

export type QuestionRequestOptions = {
  /** Default: `[DB_QUESTION]`. */
  questions?: QuestionSpec[];
  /** Default 300 s. */
  timeoutMs?: number;
  agentId?: string;
};

/** `question.request` (what the agent's ask_user does) on `sessionKey`. */
export function requestQuestion(
  requester: OperatorConnection,
  sessionKey: string,
  options: QuestionRequestOptions = {},
): Promise<{ id: string; expiresAtMs: number }> {
  const { questions = [DB_QUESTION], timeoutMs = 300_000, agentId } = options;
  return requester.request<{ id: string; expiresAtMs: number }>("question.request", {
    questions,
    sessionKey,
    ...(agentId ? { agentId } : {}),
    timeoutMs,
  });
}

/** The requester's view of how a question ended (`question.waitAnswer`). */
export function waitAnswer(requester: OperatorConnection, id: string): Promise<Payload> {
  return silence(requester.request<Payload>("question.waitAnswer", { id }, { timeoutMs: 120_000 }));
}

export type PendingApproval = {
  /** What the requester's `*.approval.request` call finally returned. */
  decision: Promise<Payload>;
  /** The `*.approval.requested` event as `watcher` (an approval route) saw it. */
  requested: Promise<Payload>;
};

/**
 * The agent side of a plugin or exec approval: `params` go to `<kind>.approval.request`, whose call
 * stays open until a decision or expiry.
 */
export function requestApproval(
  requester: OperatorConnection,
  watcher: OperatorConnection,
  kind: "plugin" | "exec",
  params: Record<string, unknown> & { sessionKey: string; timeoutMs: number },
): PendingApproval {
  const decision = silence(
    requester.request<Payload>(`${kind}.approval.request`, params, {
      timeoutMs: params.timeoutMs + 60_000,
    }),
  );
  const requested = silence(
    watcher.waitForEvent(
      `${kind}.approval.requested`,
      (p) => p.request?.sessionKey === params.sessionKey,
      30_000,
    ),
  );
  return { decision, requested };
}

// ---------------------------------------------------------------------------------------------
// Tabs
// ---------------------------------------------------------------------------------------------

export type Tabs = {
  /** Every tab opened since the current test began. */
  tabs: Tab[];
  /**
   * Opens a tab on `target` as `userId` and, given a chat id, views that chat. The token is an embed
   * token for the chat `claim` if given; a non-owner viewing a chat gets its widget's embed token (as
   * in Open WebUI: an unclaimed non-owner token may view only chats its user already owns).
   */
  openOn(target: TestServer, chatId: string | null, userId?: string, claim?: string): Promise<Tab>;
  /** `openOn` the file's server. */
  tab(chatId: string | null, userId?: string, claim?: string): Promise<Tab>;
};

/**
 * Tabs for a test file, all closed after each test. `server` is the file's server (read at each
 * open: it may be restarted); `onOpen` sees every tab before it views its chat.
 */
export function useTabs(
  options: { server?: () => TestServer; onOpen?: (tab: Tab) => void } = {},
): Tabs {
  const tabs: Tab[] = [];
  afterEach(() => {
    for (const opened of tabs.splice(0)) opened.close();
  });
  async function openOn(
    target: TestServer,
    chatId: string | null,
    userId = "owner",
    claim?: string,
  ): Promise<Tab> {
    const widgetClaim = claim ?? (chatId !== null && userId !== TEST_OWNER ? chatId : undefined);
    const opened =
      widgetClaim === undefined
        ? await openTab(target.url, await target.token(userId))
        : await target.widget(userId, widgetClaim);
    tabs.push(opened);
    options.onOpen?.(opened);
    if (chatId) expect(await opened.send("chat:view", { chatId })).toEqual({ ok: true });
    return opened;
  }
  return {
    tabs,
    openOn,
    tab(chatId, userId, claim) {
      if (!options.server) throw new Error("useTabs: no server given");
      return openOn(options.server(), chatId, userId, claim);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The server on a Gateway
// ---------------------------------------------------------------------------------------------

/** An operator connection to the real Gateway of this run. */
export function gatewayOperator(displayName: string): Promise<OperatorConnection> {
  return connectOperator({ url: inject("gatewayUrl"), token: inject("gatewayToken"), displayName });
}

export type OnGateway = {
  /** The agent side: creates asks and hears how they end. */
  requester: OperatorConnection;
  /** Another operator client ("control-ui"): the Control UI / `/approve` / another instance answering elsewhere. */
  elsewhere?: OperatorConnection;
  server: TestServer;
};

/**
 * Connects the requester (named `requesterName`, default "requester") and, if asked, the client
 * answering elsewhere to the real Gateway, then starts the server on it and waits until it is connected.
 */
type OnGatewayOptions = {
  requesterName?: string;
  /** Trusts a push service stand-in's certificate (on loopback: needs PUSH_ALLOW_PRIVATE_ENDPOINTS in `env`). */
  pushAgent?: Agent;
  env?: Record<string, string>;
  /** The server's clock (the system's unless a test moves it). */
  clock?: Clock;
};
export async function startOnGateway(
  options: OnGatewayOptions & { elsewhere: true },
): Promise<Required<OnGateway>>;
export async function startOnGateway(
  options?: OnGatewayOptions & { elsewhere?: false },
): Promise<Omit<OnGateway, "elsewhere">>;
export async function startOnGateway(
  options: OnGatewayOptions & { elsewhere?: boolean } = {},
): Promise<OnGateway> {
  const started: Partial<OnGateway> = {};
  try {
    started.requester = await gatewayOperator(options.requesterName ?? "requester");
    if (options.elsewhere) started.elsewhere = await gatewayOperator("control-ui");
    started.server = await startTestServer({
      gatewayUrl: inject("gatewayUrl"),
      gatewayToken: inject("gatewayToken"),
      env: { AGENT_ID: TEST_AGENT, ...options.env },
      pushAgent: options.pushAgent,
      clock: options.clock,
    });
    await waitConnected(started.server);
    return started as OnGateway;
  } catch (error) {
    await stopOnGateway(started).catch(() => {}); // the first error is the one to report
    throw error;
  }
}

/** Stops what `startOnGateway` started (the server as it is now: a test may have restarted it). */
export async function stopOnGateway(started: Partial<OnGateway>): Promise<void> {
  await started.server?.dispose();
  await started.requester?.stop();
  await started.elsewhere?.stop();
}

/** Starts a fake Gateway and the server on it, and waits until the server is connected. */
export async function startOnFakeGateway(
  options: {
    fake?: FakeGatewayOptions;
    env?: Record<string, string>;
    clock?: Clock;
    connectTimeoutMs?: number;
  } = {},
): Promise<{ fake: FakeGateway; server: TestServer }> {
  const fake = await startFakeGateway(options.fake);
  let server: TestServer | undefined;
  try {
    server = await startTestServer({
      gatewayUrl: fake.url,
      gatewayToken: fake.token,
      env: { AGENT_ID: TEST_AGENT, ...options.env },
      clock: options.clock,
    });
    await waitConnected(server, options.connectTimeoutMs);
  } catch (error) {
    await stopOnFakeGateway({ fake, server }).catch(() => {}); // the first error is the one to report
    throw error;
  }
  return { fake, server };
}

/** Disposes the server (as it is now) and stops the fake Gateway. */
export async function stopOnFakeGateway(started: {
  fake?: FakeGateway;
  server?: TestServer;
}): Promise<void> {
  await started.server?.dispose();
  await started.fake?.stop();
}
