// Opens an operator connection to a (real) Gateway for tests: the agent-side requester, a
// watcher, or "another client answering elsewhere". Records every event so a test can await
// one that may already have arrived (events can precede the response of the request that caused them).
import type { GatewayClientRequestOptions } from "@openclaw/gateway-client";
import { GatewayClient } from "@openclaw/gateway-client";
import { PROTOCOL_VERSION } from "@openclaw/gateway-protocol/version";

export const DEFAULT_OPERATOR_SCOPES = [
  "operator.read",
  "operator.write",
  "operator.approvals",
  "operator.questions",
  "operator.admin",
];
// Without these capabilities (and operator.admin) a client is no plugin/exec approval route.
export const DEFAULT_OPERATOR_CAPS = ["plugin-approvals", "exec-approvals"];

// Tests read payloads freely and assert their shapes, so `any` here is deliberate.
export type Payload = Record<string, any>;
export type ReceivedEvent = { event: string; payload: Payload; seq?: number; receivedAtMs: number };

export type ConnectOperatorOptions = {
  url: string;
  token: string;
  scopes?: string[];
  caps?: string[];
  /** Shown by the Gateway as e.g. `resolvedBy`. Default `gateway-client`. */
  displayName?: string;
  /** How long to wait for hello-ok. Default 30 s. */
  connectTimeoutMs?: number;
};

export type OperatorConnection = {
  client: GatewayClient;
  hello: Payload;
  request<T = Payload>(
    method: string,
    params?: unknown,
    opts?: GatewayClientRequestOptions,
  ): Promise<T>;
  /** Every event received since connecting, in arrival order. */
  events: ReceivedEvent[];
  /** Resolves with the payload of the first event (already received or future) named `name` that matches `predicate`. */
  waitForEvent(
    name: string,
    predicate?: (payload: Payload) => boolean,
    timeoutMs?: number,
  ): Promise<Payload>;
  stop(): Promise<void>;
};

export async function connectOperator(opts: ConnectOperatorOptions): Promise<OperatorConnection> {
  if (!opts.url) throw new Error("connectOperator: no Gateway URL (is OPENCLAW_TEST_GATEWAY=off?)");
  const events: ReceivedEvent[] = [];
  const waiters = new Set<{
    name: string;
    predicate: (p: Payload) => boolean;
    resolve: (p: Payload) => void;
  }>();
  const hello = Promise.withResolvers<Payload>();

  const client = new GatewayClient({
    url: opts.url,
    token: opts.token,
    role: "operator",
    scopes: opts.scopes ?? DEFAULT_OPERATOR_SCOPES,
    caps: opts.caps ?? DEFAULT_OPERATOR_CAPS,
    clientDisplayName: opts.displayName,
    minProtocol: PROTOCOL_VERSION,
    maxProtocol: PROTOCOL_VERSION,
    onHelloOk: (h) => hello.resolve(h),
    onConnectError: (error) => hello.reject(error),
    onEvent: (frame) => {
      const received: ReceivedEvent = {
        event: frame.event,
        payload: frame.payload ?? {},
        seq: frame.seq,
        receivedAtMs: Date.now(),
      };
      events.push(received);
      for (const waiter of waiters) {
        if (waiter.name === received.event && waiter.predicate(received.payload)) {
          waiters.delete(waiter);
          waiter.resolve(received.payload);
        }
      }
    },
  });

  const connectTimeoutMs = opts.connectTimeoutMs ?? 30_000;
  const timer = setTimeout(
    () => hello.reject(new Error(`no hello-ok from ${opts.url} within ${connectTimeoutMs} ms`)),
    connectTimeoutMs,
  );
  client.start();
  let helloPayload: Payload;
  try {
    helloPayload = await hello.promise;
  } catch (error) {
    client.stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }

  return {
    client,
    hello: helloPayload,
    events,
    request: <T = Payload>(
      method: string,
      params?: unknown,
      requestOpts?: GatewayClientRequestOptions,
    ) => client.request<T>(method, params, requestOpts),
    waitForEvent(name, predicate = () => true, timeoutMs = 30_000) {
      const seen = events.find((e) => e.event === name && predicate(e.payload));
      if (seen) return Promise.resolve(seen.payload);
      return new Promise<Payload>((resolve, reject) => {
        const waiter = {
          name,
          predicate,
          resolve: (p: Payload) => {
            clearTimeout(t);
            resolve(p);
          },
        };
        const t = setTimeout(() => {
          waiters.delete(waiter);
          const names = [...new Set(events.map((e) => e.event))].join(", ");
          reject(
            new Error(
              `no matching "${name}" event within ${timeoutMs} ms (received: ${names || "none"})`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    stop: () => client.stopAndWait({ timeoutMs: 5_000 }),
  };
}
