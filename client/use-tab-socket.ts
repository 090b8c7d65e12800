import { useEffect, useState } from "react";
import { useLatest } from "../components/common/use-latest.ts";
import type { InstanceStatus } from "../lib/protocol.ts";
import type { CheckUnavailable, IncompatibleProtocol } from "../lib/protocol-version.ts";
import { createTabSocket, type TabClientSocket } from "./socket.ts";

export type ConnectionState =
  | { phase: "idle" }
  | { phase: "connecting" }
  | { phase: "connected" }
  /** Lost the connection; Socket.IO retries with backoff. */
  | { phase: "reconnecting"; error?: string }
  /** The server refused the token: retrying cannot help. */
  | { phase: "refused"; error: string }
  /** The server speaks another tab protocol (a release apart): only a reload can help. */
  | { phase: "outdated"; error: string };

/**
 * One Socket.IO connection for the page's lifetime. `setup` registers the page's listeners (it runs
 * before the first connect, so nothing is missed) and may return a cleanup; it also sees every
 * (re)connect through the socket's own "connect" event.
 */
export function useTabSocket(
  token: string | null,
  setup: (socket: TabClientSocket) => (() => void) | void,
): { socket: TabClientSocket | null; state: ConnectionState; gateway: InstanceStatus | null } {
  const [socket, setSocket] = useState<TabClientSocket | null>(null);
  const [state, setState] = useState<ConnectionState>({ phase: "idle" });
  const [gateway, setGateway] = useState<InstanceStatus | null>(null);
  const setupRef = useLatest(setup);

  useEffect(() => {
    if (!token) return;
    const created = createTabSocket(token);
    /** Tries again a connect the server could not check (its store away). */
    let retry: ReturnType<typeof setTimeout> | undefined;
    setState({ phase: "connecting" });
    created.on("connect", () => setState({ phase: "connected" }));
    created.on("disconnect", (reason) => {
      setState({ phase: "reconnecting" });
      // The server closed this socket on purpose (e.g. restart): Socket.IO does not retry that alone.
      if (reason === "io server disconnect") created.connect();
    });
    created.on("connect_error", (error) => {
      // `active` is false when the server's middleware refused the handshake (bad or expired token).
      if (!created.active && isIncompatible(error))
        setState({ phase: "outdated", error: error.message });
      else if (!created.active && isUnavailable(error)) {
        setState({ phase: "reconnecting", error: error.message });
        clearTimeout(retry);
        retry = setTimeout(() => created.connect(), CHECK_RETRY_MS);
      } else if (!created.active)
        setState({ phase: "refused", error: error.message || "the server refused the connection" });
      else setState({ phase: "reconnecting", error: error.message });
    });
    created.on("gateway:status", (status) => setGateway(status));
    const cleanup = setupRef.current(created);
    created.connect();
    setSocket(created);
    return () => {
      clearTimeout(retry);
      cleanup?.();
      created.removeAllListeners();
      created.disconnect();
      setSocket(null);
    };
  }, [token, setupRef]);

  return { socket, state, gateway };
}

const CHECK_RETRY_MS = 2_000;

function isUnavailable(error: Error & { data?: unknown }): boolean {
  return (error.data as Partial<CheckUnavailable> | undefined)?.code === "UNAVAILABLE";
}

function isIncompatible(error: Error & { data?: unknown }): boolean {
  return (
    (error.data as Partial<IncompatibleProtocol> | undefined)?.code === "INCOMPATIBLE_PROTOCOL"
  );
}
