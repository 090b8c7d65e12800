import type { Ask } from "../../lib/ask.ts";
import { errorMessage } from "../../lib/error-message.ts";
import type { CloseReason } from "../../lib/protocol.ts";
import { Emitter } from "../events.ts";

/**
 * What the broker's parts tell the transports (tabs, dashboards, push, the chat watcher), emitted by
 * the part that knows it, not relayed: the cards themselves go from presence to the transports.
 */
export type BrokerEvents = {
  /** Dashboard feed: every change of every ask. */
  "ask:changed": [ask: Ask];
  /** The ask reached a terminal state; `reason` is the one its card closed with. */
  "ask:ended": [ask: Ask, reason: CloseReason];
  /** This widget is not its chat's live one (a newer reply's widget took over): it gets no cards. */
  "widget:superseded": [tabId: string, chatId: string];
  /** Open WebUI's title of a chat became known, or changed. */
  "chat:titled": [chatId: string, title: string];
};

export class BrokerFeed extends Emitter<BrokerEvents> {
  changed(ask: Ask): void {
    this.emit("ask:changed", ask);
  }

  ended(ask: Ask, reason: CloseReason): void {
    this.emit("ask:ended", ask, reason);
  }

  superseded(tabId: string, chatId: string): void {
    this.emit("widget:superseded", tabId, chatId);
  }

  titled(chatId: string, title: string): void {
    this.emit("chat:titled", chatId, title);
  }
}

/** The one boundary for work started by an event or a timer: a failure is logged, once. */
export type Settle = (work: Promise<unknown>, what: string) => void;

export const settleWith =
  (log: (message: string) => void): Settle =>
  (work, what) => {
    work.catch((error: unknown) => log(`${what} failed: ${errorMessage(error)}`));
  };
