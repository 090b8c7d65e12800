// The fake Gateway's chat side: `chat.send` (recorded, idempotent per key, answered before the
// session's first-message ping) and the `chat` events of runs that tests script with `emitChat`.
import { validateChatSendParams } from "@openclaw/gateway-protocol";
import type { ChatEmitOptions, FakeChatSendEntry } from "./types.ts";
import {
  agentFromSessionKey,
  clone,
  type Conn,
  invalidParams,
  type Method,
  normalizeSessionKey,
  RequestError,
  type Settings,
  type Timers,
  type Wire,
} from "./wire.ts";

type ChatRun = { sessionKey: string; text: string; seq: number; done: boolean };

export type Chat = ReturnType<typeof createChat>;

export function createChat(settings: Settings, timers: Timers, wire: Wire) {
  const runs = new Map<string, ChatRun>();
  const sessions = new Set<string>();
  const sent: FakeChatSendEntry[] = [];
  let onSend: ((entry: FakeChatSendEntry) => void) | null = null;

  function send(conn: Conn, params: unknown): { runId: string; status: string } {
    if (!validateChatSendParams(params))
      throw invalidParams("chat.send", validateChatSendParams.errors);
    if (params.message.trim() === "" && (params.attachments?.length ?? 0) === 0) {
      throw new RequestError("message or attachment required");
    }
    const agent = agentFromSessionKey(params.sessionKey);
    if (settings.knownAgents && agent !== undefined && !settings.knownAgents.includes(agent)) {
      throw new RequestError(`Agent "${agent}" no longer exists in configuration`);
    }
    const runId = params.idempotencyKey;
    const existing = runs.get(runId);
    if (existing && !existing.done) return { runId, status: "in_flight" };
    const sessionKey = normalizeSessionKey(params.sessionKey);
    runs.set(runId, { sessionKey, text: "", seq: 0, done: false });
    const entry: FakeChatSendEntry = {
      connId: conn.connId,
      sessionKey,
      message: params.message,
      idempotencyKey: params.idempotencyKey,
      params: clone(params as Record<string, unknown>),
      atMs: settings.now(),
    };
    sent.push(entry);
    const firstMessage = !sessions.has(sessionKey);
    sessions.add(sessionKey);
    // Let the response go out first (as observed), then the session-metadata ping and any scripted run.
    queueMicrotask(() => {
      if (timers.stopped) return;
      if (firstMessage) wire.broadcast("chat.metadata.changed", {});
      onSend?.(clone(entry));
    });
    return { runId, status: "started" };
  }

  function emit(sessionKey: string, runId: string, o: ChatEmitOptions): Record<string, unknown> {
    const key = normalizeSessionKey(sessionKey);
    let run = runs.get(runId);
    if (!run) {
      run = { sessionKey: key, text: "", seq: 0, done: false };
      runs.set(runId, run);
    }
    const agentId = o.agentId ?? agentFromSessionKey(key);
    const base: Record<string, unknown> = {
      runId,
      sessionKey: key,
      ...(agentId !== undefined ? { agentId } : {}),
    };
    const cumulative = () => ({ role: "assistant", content: [{ type: "text", text: run.text }] });
    let payload: Record<string, unknown>;
    switch (o.state) {
      case "status": {
        run.seq = o.seq ?? run.seq + 1;
        payload = { ...base, state: "status", phase: o.phase ?? "starting_model", seq: run.seq };
        break;
      }
      case "delta": {
        const deltaText = o.deltaText ?? "";
        run.text = o.replace ? deltaText : run.text + deltaText;
        run.seq = o.seq ?? run.seq + 1;
        payload = {
          ...base,
          state: "delta",
          message: o.message ?? cumulative(),
          deltaText,
          ...(o.replace ? { replace: true } : {}),
          seq: run.seq,
        };
        break;
      }
      case "final": {
        if (o.deltaText !== undefined) run.text = o.replace ? o.deltaText : run.text + o.deltaText;
        run.seq = o.seq ?? Math.max(run.seq, 1);
        run.done = true;
        const message = o.message ?? (run.text === "" ? undefined : cumulative());
        payload = {
          ...base,
          state: "final",
          ...(message !== undefined ? { message } : {}),
          ...(o.stopReason !== undefined ? { stopReason: o.stopReason } : {}),
          seq: run.seq,
        };
        break;
      }
      case "aborted":
      case "error": {
        run.seq = o.seq ?? Math.max(run.seq, 1);
        run.done = true;
        payload = {
          ...base,
          state: o.state,
          ...(o.message !== undefined ? { message: o.message } : {}),
          ...(o.errorMessage !== undefined ? { errorMessage: o.errorMessage } : {}),
          ...(o.stopReason !== undefined ? { stopReason: o.stopReason } : {}),
          seq: run.seq,
        };
        break;
      }
    }
    wire.broadcast("chat", payload);
    return clone(payload);
  }

  const methods: Record<string, Method> = {
    "chat.send": (conn, params, reply) => reply({ ok: true, payload: send(conn, params) }),
  };

  return {
    methods,
    sent,
    emit,
    onSend(callback: ((entry: FakeChatSendEntry) => void) | null): void {
      onSend = callback;
    },
  };
}
