// One client connection to the fake Gateway: the challenge, the `connect` handshake and hello-ok
// (with the real Gateway's refusals), request frames checked against the protocol package's
// schemas, and the dispatch of each request to an injected failure, a test's own handler or a
// built-in method.
import { randomUUID } from "node:crypto";
import {
  formatValidationErrors,
  GATEWAY_SERVER_CAPS,
  type HelloOk,
  validateConnectParams,
  validateRequestFrame,
} from "@openclaw/gateway-protocol";
import { PROTOCOL_VERSION } from "@openclaw/gateway-protocol/version";
import type { WebSocket } from "ws";
import { errorMessage } from "../../../lib/error-message.ts";
import {
  type FakeErrorShape,
  FakeGatewayError,
  type FakeHandler,
  type FakeHandlerContext,
  type FakeRequestLogEntry,
} from "./types.ts";
import {
  clone,
  type Conn,
  type FaultState,
  isRecord,
  MAX_BUFFERED_BYTES,
  MAX_PAYLOAD,
  type Method,
  RequestError,
  type Responder,
  type Settings,
  type Timers,
  type Wire,
} from "./wire.ts";

const ADVERTISED_EVENTS = [
  "connect.challenge",
  "agent",
  "chat",
  "chat.metadata.changed",
  "presence",
  "tick",
  "shutdown",
  "health",
  "heartbeat",
  "exec.approval.requested",
  "exec.approval.resolved",
  "question.requested",
  "question.resolved",
  "plugin.approval.requested",
  "plugin.approval.resolved",
];

export type Connections = ReturnType<typeof createConnections>;

export function createConnections(parts: {
  settings: Settings;
  timers: Timers;
  wire: Wire;
  faults: FaultState;
  builtins: Record<string, Method>;
}) {
  const { settings, timers, wire, faults, builtins } = parts;
  const requests: FakeRequestLogEntry[] = [];
  const customHandlers = new Map<string, FakeHandler>();
  const connectionWaiters = new Set<() => void>();
  let helloCount = 0;

  function toErrorShape(error: unknown): FakeErrorShape {
    if (error instanceof RequestError || error instanceof FakeGatewayError)
      return clone(error.shape);
    return { code: "UNAVAILABLE", message: errorMessage(error) };
  }

  function handleRequest(conn: Conn, id: string, method: string, params: unknown): void {
    let settled = false;
    const reply: Responder = (r) => {
      if (settled && !(r.ok && isRecord(r.payload) && "decision" in r.payload)) return;
      // A two-phase approval answers twice (accepted, then final); everything else answers once.
      settled = true;
      wire.respond(conn, id, method, r);
    };
    const failure = faults.takeFailure(method);
    if (failure) {
      reply({ ok: false, error: failure });
      return;
    }
    try {
      const custom = customHandlers.get(method);
      if (custom) {
        const ctx: FakeHandlerContext = {
          connId: conn.connId,
          scopes: [...conn.scopes],
          caps: [...conn.caps],
          method,
        };
        Promise.resolve()
          .then(() => custom(params, ctx))
          .then(
            (payload) => reply({ ok: true, payload }),
            (error: unknown) => reply({ ok: false, error: toErrorShape(error) }),
          );
        return;
      }
      const builtin = builtins[method];
      if (!builtin) throw new RequestError(`unknown method: ${method}`);
      builtin(conn, params, reply);
    } catch (error) {
      reply({ ok: false, error: toErrorShape(error) });
    }
  }

  function buildHello(conn: Conn): HelloOk {
    const ts = settings.now();
    const { serverVersion, defaultAgentId } = settings;
    return {
      type: "hello-ok",
      protocol: PROTOCOL_VERSION,
      server: {
        version: serverVersion,
        buildId: `${serverVersion}-fake-gateway`,
        bootId: settings.bootId,
        controlUiBuildSource: "bundled",
        connId: conn.connId,
      },
      features: {
        methods: [...new Set([...Object.keys(builtins), ...customHandlers.keys()])],
        events: [...ADVERTISED_EVENTS],
        capabilities: Object.values(GATEWAY_SERVER_CAPS),
      },
      snapshot: {
        suspension: { phase: "accepting" },
        presence: [],
        health: { ok: true, ts },
        stateVersion: { presence: 1, health: 1 },
        uptimeMs: Math.max(0, Math.floor(ts - settings.startedAtMs)),
        sessionDefaults: {
          defaultAgentId,
          modelConfigured: false,
          ownership: "sole",
          selectionRequired: false,
          mainKey: "main",
          mainSessionKey: `agent:${defaultAgentId}:main`,
          scope: "per-sender",
        },
        authMode: "token",
      },
      auth: { role: conn.role, scopes: [...conn.scopes] },
      policy: {
        maxPayload: MAX_PAYLOAD,
        maxBufferedBytes: MAX_BUFFERED_BYTES,
        tickIntervalMs: settings.tickIntervalMs,
        attachments: { maxBytes: 19_464_192, maxImageBytes: 6_291_456 },
        allowedSessionVisibilities: ["shared", "read-only", "suggest", "draft"],
        hasMultipleSessionSharingIdentities: false,
      },
    };
  }

  function refuseConnect(
    conn: Conn,
    id: string,
    error: FakeErrorShape,
    closeCode: number,
    closeReason: string,
  ): void {
    wire.sendLater(conn, JSON.stringify({ type: "res", id, ok: false, error }), "connect", () => {
      if (conn.ws.readyState === conn.ws.OPEN) conn.ws.close(closeCode, closeReason);
    });
  }

  function handleConnect(conn: Conn, id: string, params: unknown): void {
    if (!validateConnectParams(params)) {
      const message = `invalid connect params: ${formatValidationErrors(validateConnectParams.errors)}`;
      refuseConnect(conn, id, { code: "INVALID_REQUEST", message }, 1008, message);
      return;
    }
    if (params.minProtocol > PROTOCOL_VERSION || params.maxProtocol < PROTOCOL_VERSION) {
      refuseConnect(
        conn,
        id,
        {
          code: "INVALID_REQUEST",
          message: "protocol mismatch",
          details: {
            code: "PROTOCOL_MISMATCH",
            clientMinProtocol: params.minProtocol,
            clientMaxProtocol: params.maxProtocol,
            expectedProtocol: PROTOCOL_VERSION,
            minimumProbeProtocol: 3,
          },
        },
        1002,
        "protocol mismatch",
      );
      return;
    }
    const presented = params.auth?.token;
    if (presented === undefined && params.device === undefined) {
      refuseConnect(
        conn,
        id,
        {
          code: "NOT_PAIRED",
          message: "device identity required",
          details: { code: "DEVICE_IDENTITY_REQUIRED" },
        },
        1008,
        "device identity required",
      );
      return;
    }
    if (presented !== settings.token) {
      const message = "unauthorized: gateway token mismatch (provide gateway auth token)";
      refuseConnect(
        conn,
        id,
        {
          code: "INVALID_REQUEST",
          message,
          details: {
            code: "AUTH_TOKEN_MISMATCH",
            authReason: "token_mismatch",
            canRetryWithDeviceToken: false,
            recommendedNextStep: "update_auth_credentials",
          },
        },
        1008,
        message,
      );
      return;
    }
    const rejection = faults.connectRejection;
    if (rejection === "startup") {
      refuseConnect(
        conn,
        id,
        {
          code: "UNAVAILABLE",
          message: "gateway starting",
          details: { reason: "startup-sidecars" },
          retryable: true,
          retryAfterMs: 500,
        },
        1013,
        "gateway starting",
      );
      return;
    }
    if (rejection) {
      refuseConnect(conn, id, clone(rejection), 1008, rejection.message);
      return;
    }
    conn.role = params.role ?? "operator";
    conn.scopes = params.scopes ?? ["operator.admin"];
    conn.caps = params.caps ?? [];
    conn.displayName = params.client.displayName ?? params.client.id;
    const hello = buildHello(conn);
    const finish = () => {
      if (timers.stopped || conn.ws.readyState !== conn.ws.OPEN) return;
      wire.sendText(conn, JSON.stringify({ type: "res", id, ok: true, payload: hello }));
      conn.hello = true;
      helloCount += 1;
      for (const wake of [...connectionWaiters]) wake();
    };
    const delay = faults.latencyOf("connect");
    if (delay > 0) timers.later(finish, delay);
    else finish();
  }

  function onMessage(conn: Conn, raw: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(raw);
    } catch {
      return; // the real Gateway ignores unparsable frames
    }
    if (!validateRequestFrame(frame)) {
      if (isRecord(frame) && typeof frame.id === "string") {
        wire.respond(conn, frame.id, "", {
          ok: false,
          error: {
            code: "INVALID_REQUEST",
            message: `invalid request frame: ${formatValidationErrors(validateRequestFrame.errors)}`,
          },
        });
      }
      return;
    }
    requests.push({
      connId: conn.connId,
      method: frame.method,
      params: clone(frame.params),
      atMs: settings.now(),
    });
    if (!conn.hello) {
      if (frame.method !== "connect") {
        const message = "invalid handshake: first request must be connect";
        refuseConnect(conn, frame.id, { code: "INVALID_REQUEST", message }, 1008, message);
        return;
      }
      handleConnect(conn, frame.id, frame.params);
      return;
    }
    if (frame.method === "connect") {
      wire.respond(conn, frame.id, "connect", {
        ok: false,
        error: { code: "INVALID_REQUEST", message: "connect already completed" },
      });
      return;
    }
    handleRequest(conn, frame.id, frame.method, frame.params);
  }

  /** Takes a new WebSocket: sends the challenge and handles its frames until it closes. */
  function accept(ws: WebSocket): void {
    if (timers.stopped) {
      ws.terminate();
      return;
    }
    const conn: Conn = {
      connId: randomUUID(),
      ws,
      hello: false,
      seq: 0,
      scopes: [],
      caps: [],
      role: "operator",
      displayName: "gateway-client",
      buffered: [],
    };
    wire.conns.set(conn.connId, conn);
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      const text = Buffer.isBuffer(data)
        ? data.toString("utf8")
        : Array.isArray(data)
          ? Buffer.concat(data).toString("utf8")
          : Buffer.from(data).toString("utf8");
      onMessage(conn, text);
    });
    ws.on("close", () => wire.conns.delete(conn.connId));
    ws.on("error", () => wire.conns.delete(conn.connId));
    // The challenge carries no seq, like the real Gateway's.
    wire.sendText(
      conn,
      JSON.stringify({
        type: "event",
        event: "connect.challenge",
        payload: {
          nonce: randomUUID(),
          ts: settings.now(),
          capabilities: ["model-catalog-snapshot"],
        },
      }),
    );
  }

  function connectionCount(): number {
    return wire.handshaken().filter((c) => c.ws.readyState === c.ws.OPEN).length;
  }

  return {
    accept,
    requests,
    connectionCount,
    helloCount: () => helloCount,
    setHandler(method: string, handler: FakeHandler | null): void {
      if (handler) customHandlers.set(method, handler);
      else customHandlers.delete(method);
    },
    waitForConnections(n: number, timeoutMs: number): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        if (connectionCount() >= n) {
          resolve();
          return;
        }
        let timer: NodeJS.Timeout | null = null;
        const check = () => {
          if (connectionCount() < n) return;
          timers.cancel(timer);
          connectionWaiters.delete(check);
          resolve();
        };
        connectionWaiters.add(check);
        timer = timers.later(() => {
          connectionWaiters.delete(check);
          reject(
            new Error(`fake gateway: ${connectionCount()}/${n} connections after ${timeoutMs} ms`),
          );
        }, timeoutMs);
      });
    },
    stop(): void {
      connectionWaiters.clear();
    },
  };
}
