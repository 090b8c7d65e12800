import { io } from "socket.io-client";
import type { ClientEvent, ClientEvents } from "../../lib/protocol.ts";
import { emitWithAck, type TypedSocket } from "../support/typed-ack.ts";
import { nowMs } from "./clock.ts";

/**
 * The load client's tabs: real socket.io-client connections over websocket, each viewing its own
 * chat. Measurement tabs timestamp every `ask:show` / `ask:close` on arrival (nowMs() of
 * clock.ts, the one clock every latency in the run is taken with); idle tabs only count what they should never get.
 */

export type Arrival = { at: number; payload: { id?: string; askId?: string; reason?: string } & Record<string, unknown> };
type Waiter = { event: string; match: (payload: Arrival["payload"]) => boolean; resolve: (arrival: Arrival) => void; reject: (error: Error) => void; timer: NodeJS.Timeout };

export type BenchTab = {
  socket: TypedSocket;
  chat: string;
  /** The next matching event from now on (register before triggering it). */
  next(event: "ask:show" | "ask:close", match?: (payload: Arrival["payload"]) => boolean, timeoutMs?: number): Promise<Arrival>;
  /** Emits with an ack; fails on a timeout or an `{ok: false}` ack. */
  send<E extends ClientEvent>(event: E, payload: ClientEvents[E]["payload"], timeoutMs?: number): Promise<ClientEvents[E]["ack"]>;
  close(): void;
};

/** What idle tabs got that they should not have: any ask, or a disconnect the bench did not ask for. */
export const strays = { shows: 0, disconnects: [] as string[] };

const OPTIONS = { transports: ["websocket"], reconnection: false, forceNew: true, timeout: 60_000 };

function connect(url: string, token: string | null): Promise<TypedSocket> {
  const socket: TypedSocket = io(url, { ...OPTIONS, auth: token === null ? {} : { token } });
  return new Promise((resolve, reject) => {
    socket.once("connect", () => resolve(socket));
    socket.once("connect_error", (error) => {
      socket.close();
      reject(new Error(`tab could not connect to ${url}: ${error.message}`));
    });
  });
}

async function view(socket: TypedSocket, chat: string): Promise<void> {
  const ack = await emitWithAck(socket, "chat:view", { chatId: chat }, 60_000);
  if (!ack.ok) throw new Error(`chat:view ${chat} refused: ${ack.error.message}`);
}

export async function openTab(url: string, token: string | null, chat: string): Promise<BenchTab> {
  const socket = await connect(url, token);
  const waiters = new Set<Waiter>();
  const arrive = (event: string) => (payload: Arrival["payload"]) => {
    const at = nowMs();
    for (const waiter of waiters) {
      if (waiter.event !== event || !waiter.match(payload)) continue;
      waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.resolve({ at, payload });
    }
  };
  socket.on("ask:show", arrive("ask:show"));
  socket.on("ask:close", arrive("ask:close"));
  socket.on("disconnect", (reason) => {
    if (reason === "io client disconnect") return;
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`tab of ${chat} disconnected: ${reason}`));
    }
    waiters.clear();
  });
  const tab: BenchTab = {
    socket,
    chat,
    next(event, match = () => true, timeoutMs = 15_000) {
      return new Promise<Arrival>((resolve, reject) => {
        const waiter: Waiter = {
          event,
          match,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(waiter);
            reject(new Error(`tab of ${chat}: no ${event} within ${timeoutMs} ms`));
          }, timeoutMs),
        };
        waiters.add(waiter);
      });
    },
    async send(event, payload, timeoutMs = 15_000) {
      const ack = await emitWithAck(socket, event, payload, timeoutMs);
      if (!ack.ok) throw new Error(`${event} on the tab of ${chat} failed: ${ack.error.code} ${ack.error.message}`);
      return ack;
    },
    close: () => socket.close(),
  };
  await view(socket, chat);
  return tab;
}

/** An idle tab: connected, viewing its own chat, and expected to receive nothing. */
export async function openIdleTab(url: string, token: string | null, chat: string): Promise<TypedSocket> {
  const socket = await connect(url, token);
  socket.on("ask:show", () => strays.shows++);
  socket.on("disconnect", (reason) => {
    if (reason !== "io client disconnect") strays.disconnects.push(`${chat}: ${reason}`);
  });
  await view(socket, chat);
  return socket;
}

/** Runs `open(i)` for i in [from, to) with at most `concurrency` at a time. */
export async function openMany<T>(from: number, to: number, concurrency: number, open: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(to - from);
  let next = from;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      results[i - from] = await open(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, to - from) }, worker));
  return results;
}
