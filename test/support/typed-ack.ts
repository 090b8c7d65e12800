// A test client's emit-with-ack, typed from the protocol's one event map (lib/protocol.ts).
import type { Socket } from "socket.io-client";
import type {
  ClientEvent,
  ClientEvents,
  ClientToServerEvents,
  ServerToClientEvents,
} from "../../lib/protocol.ts";

export type TypedSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

/**
 * Socket.IO's emitWithAck types cannot follow a generic event name: the socket is viewed untyped in
 * this one place, and the signature restores the types.
 */
export function emitWithAck<E extends ClientEvent>(
  socket: TypedSocket,
  event: E,
  payload: ClientEvents[E]["payload"],
  timeoutMs: number,
): Promise<ClientEvents[E]["ack"]> {
  return untyped(socket).timeout(timeoutMs).emitWithAck(event, payload);
}

/** For what a faulty or hostile client might send. */
export function untyped(socket: TypedSocket): Socket {
  return socket;
}
