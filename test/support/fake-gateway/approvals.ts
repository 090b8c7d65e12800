// The fake Gateway's plugin and exec approvals: `*.approval.request` (open until a decision or
// expiry, or two-phase), `.list`, `.resolve`, `.waitDecision`, `exec.approval.get`, and the
// `*.approval.requested` / `*.approval.resolved` broadcasts, as the real Gateway sends them.
import { randomUUID } from "node:crypto";
import {
  validateExecApprovalGetParams,
  validateExecApprovalRequestParams,
  validateExecApprovalResolveParams,
  validatePluginApprovalRequestParams,
  validatePluginApprovalResolveParams,
} from "@openclaw/gateway-protocol";
import type {
  ApprovalInput,
  ApprovalKind,
  FakeApprovalRecord,
  FakeApprovalState,
} from "./types.ts";
import {
  agentFromSessionKey,
  clone,
  type Conn,
  invalidParams,
  isRecord,
  type Method,
  normalizeSessionKey,
  RequestError,
  type Responder,
  type Settings,
  type Timers,
  type Wire,
} from "./wire.ts";

const APPROVAL_DECISIONS = ["allow-once", "allow-always", "deny"];
const APPROVAL_NOT_FOUND_DETAILS = {
  reason: "APPROVAL_NOT_FOUND",
  remediation: "Re-request the action; pending approvals are cleared after expiry or restart.",
};

export type ApprovalState = FakeApprovalState & {
  timer: NodeJS.Timeout | null;
  waiters: Set<() => void>;
  requesterConnId: string | null;
};

export type Approvals = ReturnType<typeof createApprovals>;

/** Where the turn that asked came from (a channel thread, ...): both kinds of request carry it. */
function turnSourceOf(input: Record<string, unknown>): Record<string, unknown> {
  return {
    turnSourceChannel: input.turnSourceChannel ?? null,
    turnSourceTo: input.turnSourceTo ?? null,
    turnSourceAccountId: input.turnSourceAccountId ?? null,
    turnSourceThreadId: input.turnSourceThreadId ?? null,
  };
}

function normalizePluginRequest(input: Record<string, unknown>): Record<string, unknown> {
  const sessionKey =
    typeof input.sessionKey === "string" ? normalizeSessionKey(input.sessionKey) : null;
  return {
    pluginId: input.pluginId ?? null,
    title: input.title ?? "Plugin approval",
    description: input.description ?? "A plugin asks for approval",
    scope: input.scope ?? null,
    detail: input.detail ?? null,
    severity: input.severity ?? null,
    toolName: input.toolName ?? null,
    toolCallId: input.toolCallId ?? null,
    agentId: input.agentId ?? agentFromSessionKey(sessionKey) ?? null,
    sessionKey,
    runId: input.runId ?? null,
    ...turnSourceOf(input),
  };
}

function normalizeExecRequest(input: Record<string, unknown>): Record<string, unknown> {
  const sessionKey =
    typeof input.sessionKey === "string" ? normalizeSessionKey(input.sessionKey) : null;
  const unavailable = Array.isArray(input.unavailableDecisions) ? input.unavailableDecisions : [];
  return {
    command: input.command ?? "echo hello",
    systemRunBinding: null,
    systemRunPlan: input.systemRunPlan ?? null,
    cwd: input.cwd ?? null,
    nodeId: input.nodeId ?? null,
    host: input.host ?? "gateway",
    security: input.security ?? null,
    ask: input.ask ?? null,
    warningText: input.warningText ?? null,
    scope: input.scope ?? null,
    commandAnalysis: input.commandAnalysis ?? {
      commandCount: 1,
      nestedCommandCount: 0,
      riskKinds: [],
      warningLines: [],
    },
    allowedDecisions:
      input.allowedDecisions ?? APPROVAL_DECISIONS.filter((d) => !unavailable.includes(d)),
    agentId: input.agentId ?? agentFromSessionKey(sessionKey) ?? null,
    resolvedPath: input.resolvedPath ?? null,
    sessionKey,
    sessionId: input.sessionId ?? null,
    runId: input.runId ?? null,
    toolCallId: input.toolCallId ?? null,
    ...turnSourceOf(input),
    cronExecutionSource: null,
    cronOperationBinding: null,
  };
}

function recordOf(a: ApprovalState): FakeApprovalRecord {
  return clone({
    approvalKind: a.approvalKind,
    id: a.id,
    request: a.request,
    createdAtMs: a.createdAtMs,
    expiresAtMs: a.expiresAtMs,
  });
}

function finalOf(a: ApprovalState) {
  return { id: a.id, decision: a.decision, createdAtMs: a.createdAtMs, expiresAtMs: a.expiresAtMs };
}

export function createApprovals(settings: Settings, timers: Timers, wire: Wire) {
  const approvals = new Map<string, ApprovalState>();

  /** Is any other handshaken connection a route for this kind (would get its `requested` event)? */
  function hasRoute(kind: ApprovalKind, exceptConnId: string | null): boolean {
    const event = `${kind}.approval.requested`;
    return wire.handshaken().some((c) => c.connId !== exceptConnId && wire.reaches(event, c));
  }

  function create(
    kind: ApprovalKind,
    input: ApprovalInput,
    requesterConnId: string | null,
  ): ApprovalState {
    const { id, timeoutMs, createdAtMs: createdInput, twoPhase: _twoPhase, ...rest } = input;
    const createdAtMs = createdInput ?? settings.now();
    const request = kind === "plugin" ? normalizePluginRequest(rest) : normalizeExecRequest(rest);
    const state: ApprovalState = {
      approvalKind: kind,
      id: id ?? (kind === "plugin" ? `plugin:${randomUUID()}` : randomUUID()),
      request,
      createdAtMs,
      expiresAtMs: createdAtMs + (timeoutMs ?? settings.approvalTimeoutMs),
      status: "pending",
      decision: null,
      resolvedBy: null,
      resolvedAtMs: null,
      timer: null,
      waiters: new Set(),
      requesterConnId,
    };
    approvals.set(state.id, state);
    state.timer = timers.later(() => expire(state), state.expiresAtMs - settings.now());
    const { approvalKind, id: approvalId, createdAtMs: c, expiresAtMs: e } = state;
    wire.broadcast(
      `${kind}.approval.requested`,
      { approvalKind, id: approvalId, request, createdAtMs: c, expiresAtMs: e },
      requesterConnId,
    );
    return state;
  }

  function finish(a: ApprovalState, broadcastDecision: string): void {
    timers.cancel(a.timer);
    a.timer = null;
    const wakeWaiters = () => {
      for (const wake of a.waiters) wake();
      a.waiters.clear();
    };
    // Order seen live: a decision answers the waiting requests before the broadcast; an expiry
    // broadcasts first and then answers them.
    if (a.status === "resolved") wakeWaiters();
    wire.broadcast(`${a.approvalKind}.approval.resolved`, {
      id: a.id,
      decision: broadcastDecision,
      resolvedBy: a.resolvedBy,
      ts: a.resolvedAtMs,
      request: a.request,
    });
    wakeWaiters();
  }

  function expire(a: ApprovalState): void {
    if (a.status !== "pending") return;
    a.status = "expired";
    a.resolvedAtMs = Math.max(settings.now(), a.expiresAtMs);
    finish(a, "deny");
  }

  function decide(
    kind: ApprovalKind | null,
    id: string,
    decision: string,
    resolvedBy: string,
  ): void {
    if (!APPROVAL_DECISIONS.includes(decision)) throw new RequestError("invalid decision");
    const a = approvals.get(id);
    if (!a || (kind !== null && a.approvalKind !== kind))
      throw new RequestError("unknown or expired approval id", APPROVAL_NOT_FOUND_DETAILS);
    if (a.status === "resolved" && a.decision === decision) return; // same decision twice → ok
    if (a.status !== "pending")
      throw new RequestError("approval already resolved", { reason: "APPROVAL_ALREADY_RESOLVED" });
    const allowed = a.request.allowedDecisions;
    if (Array.isArray(allowed) && !allowed.includes(decision))
      throw new RequestError("invalid decision");
    a.status = "resolved";
    a.decision = decision;
    a.resolvedBy = resolvedBy;
    a.resolvedAtMs = settings.now();
    finish(a, decision);
  }

  function request(kind: ApprovalKind, conn: Conn, params: unknown, reply: Responder): void {
    const validator =
      kind === "plugin" ? validatePluginApprovalRequestParams : validateExecApprovalRequestParams;
    if (!validator(params)) throw invalidParams(`${kind}.approval.request`, validator.errors);
    const input = params as ApprovalInput;
    const { knownAgents } = settings;
    const sessionAgent = agentFromSessionKey(
      typeof input.sessionKey === "string" ? input.sessionKey : undefined,
    );
    if (
      knownAgents &&
      typeof input.agentId === "string" &&
      !knownAgents.includes(input.agentId.toLowerCase())
    ) {
      throw new RequestError(`Unknown agent id "${input.agentId}"`);
    }
    if (knownAgents && sessionAgent !== undefined && !knownAgents.includes(sessionAgent)) {
      throw new RequestError(`Unknown agent id "${sessionAgent}"`);
    }
    const twoPhase = input.twoPhase === true;
    if (!hasRoute(kind, conn.connId)) {
      // Seen live: with no approval route the request returns at once with decision null.
      const createdAtMs = settings.now();
      const id =
        typeof input.id === "string"
          ? input.id
          : kind === "plugin"
            ? `plugin:${randomUUID()}`
            : randomUUID();
      const timeoutMs =
        typeof input.timeoutMs === "number" ? input.timeoutMs : settings.approvalTimeoutMs;
      reply({
        ok: true,
        payload: { id, decision: null, createdAtMs, expiresAtMs: createdAtMs + timeoutMs },
      });
      return;
    }
    const a = create(kind, input, conn.connId);
    if (twoPhase) {
      reply({
        ok: true,
        payload: {
          status: "accepted",
          id: a.id,
          deliveryRoute: "approval-client",
          createdAtMs: a.createdAtMs,
          expiresAtMs: a.expiresAtMs,
        },
      });
    }
    a.waiters.add(() => reply({ ok: true, payload: finalOf(a) }));
  }

  function waitDecision(params: unknown, reply: Responder): void {
    const id = isRecord(params) && typeof params.id === "string" ? params.id : undefined;
    const a = id === undefined ? undefined : approvals.get(id);
    if (!a) throw new RequestError("approval expired or not found");
    const answer = () =>
      reply({
        ok: true,
        payload: { ...finalOf(a), terminalReason: a.status === "expired" ? "timeout" : "user" },
      });
    if (a.status !== "pending") answer();
    else a.waiters.add(answer);
  }

  const methods: Record<string, Method> = {};
  for (const kind of ["plugin", "exec"] as const) {
    methods[`${kind}.approval.request`] = (conn, params, reply) =>
      request(kind, conn, params, reply);
    // No params validator exists for the lists; the real Gateway ignores params there.
    methods[`${kind}.approval.list`] = (_conn, _params, reply) =>
      reply({
        ok: true,
        payload: [...approvals.values()]
          .filter((a) => a.approvalKind === kind && a.status === "pending")
          .map((a) =>
            clone({
              id: a.id,
              request: a.request,
              createdAtMs: a.createdAtMs,
              expiresAtMs: a.expiresAtMs,
              approvalKind: a.approvalKind,
            }),
          ),
      });
    methods[`${kind}.approval.resolve`] = (conn, params, reply) => {
      const validator =
        kind === "plugin" ? validatePluginApprovalResolveParams : validateExecApprovalResolveParams;
      if (!validator(params)) throw invalidParams(`${kind}.approval.resolve`, validator.errors);
      decide(kind, params.id, params.decision, conn.displayName);
      reply({ ok: true, payload: { ok: true } });
    };
    methods[`${kind}.approval.waitDecision`] = (_conn, params, reply) =>
      waitDecision(params, reply);
  }
  methods["exec.approval.get"] = (_conn, params, reply) => {
    if (!validateExecApprovalGetParams(params))
      throw invalidParams("exec.approval.get", validateExecApprovalGetParams.errors);
    const a = approvals.get(params.id);
    if (!a || a.approvalKind !== "exec" || a.status !== "pending") {
      throw new RequestError("unknown or expired approval id", APPROVAL_NOT_FOUND_DETAILS);
    }
    reply({
      ok: true,
      payload: {
        id: a.id,
        commandText: a.request.command,
        commandPreview: null,
        allowedDecisions: a.request.allowedDecisions,
        host: a.request.host,
        nodeId: a.request.nodeId,
        agentId: a.request.agentId,
        expiresAtMs: a.expiresAtMs,
      },
    });
  };

  return {
    methods,
    get: (id: string) => approvals.get(id),
    /** Every approval with its state, as the test API shows it. */
    states: (): FakeApprovalState[] =>
      [...approvals.values()].map((a) =>
        clone({
          approvalKind: a.approvalKind,
          id: a.id,
          request: a.request,
          createdAtMs: a.createdAtMs,
          expiresAtMs: a.expiresAtMs,
          status: a.status,
          decision: a.decision,
          resolvedBy: a.resolvedBy,
          resolvedAtMs: a.resolvedAtMs,
        }),
      ),
    /** An approval raised with no requester connection (the test API). */
    create: (kind: ApprovalKind, input: ApprovalInput) => recordOf(create(kind, input, null)),
    decide,
    expire,
    /** Forgets every timer and waiter (the timers themselves are cleared by their owner). */
    stop(): void {
      for (const a of approvals.values()) {
        a.timer = null;
        a.waiters.clear();
      }
    },
  };
}
