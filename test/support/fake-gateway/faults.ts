// Fault injection: what the real Gateway cannot be made to do on demand. Raw and malformed frames,
// dropped and restarting connections, slow consumers (lost or held events, seq gaps), latency,
// failing methods and refused connects.
import type { FakeGateway } from "./types.ts";
import { clone, type FaultState, type Wire } from "./wire.ts";

type FaultControls = Pick<
  FakeGateway,
  | "emitRaw"
  | "sendRaw"
  | "dropConnections"
  | "shutdown"
  | "pauseEvents"
  | "resumeEvents"
  | "skipSeq"
  | "setLatency"
  | "failNext"
  | "rejectConnects"
>;

export function faultControls(wire: Wire, faults: FaultState): FaultControls {
  return {
    emitRaw(event, payload, o = {}) {
      for (const conn of wire.handshaken()) wire.sendEvent(conn, event, clone(payload), o.seq);
    },

    sendRaw(text) {
      for (const conn of wire.handshaken()) wire.sendText(conn, text);
    },

    dropConnections(o = {}) {
      for (const conn of [...wire.conns.values()]) {
        if (o.code === undefined) conn.ws.terminate();
        else conn.ws.close(o.code, o.reason ?? "");
      }
    },

    shutdown(reason = "gateway restarting", restartExpectedMs) {
      const payload = restartExpectedMs === undefined ? { reason } : { reason, restartExpectedMs };
      for (const conn of [...wire.conns.values()]) {
        if (conn.hello) wire.sendEvent(conn, "shutdown", payload);
        if (conn.ws.readyState === conn.ws.OPEN) conn.ws.close(1012, "service restart");
      }
    },

    pauseEvents(mode = "drop") {
      faults.pauseMode = mode;
    },

    resumeEvents() {
      faults.pauseMode = null;
      for (const conn of wire.conns.values()) {
        const queued = conn.buffered.splice(0);
        for (const text of queued) wire.sendText(conn, text);
      }
    },

    skipSeq(n = 1) {
      for (const conn of wire.conns.values()) conn.seq += n;
    },

    setLatency(ms, method) {
      if (method === undefined) faults.globalLatencyMs = Math.max(0, ms);
      else if (ms > 0) faults.methodLatency.set(method, ms);
      else faults.methodLatency.delete(method);
    },

    failNext(method, error, times = 1) {
      faults.failures.set(method, { error: clone(error), remaining: times });
    },

    rejectConnects(mode) {
      faults.connectRejection = mode;
    },
  };
}
