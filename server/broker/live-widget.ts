import type { Clock } from "../../lib/clock.ts";
import type { AskStore } from "../store/store.ts";
import type { Presence, ReplyClaim, Tab } from "./ports.ts";

/**
 * The live-widget rule (docs/ARCHITECTURE.md#live-and-idle-widgets, #routing; docs/PROTOCOL.md#tab-protocol-v1) for tokens with a chat claim: only the widget of the chat's
 * newest reply takes cards. An older reply's widget (or one of the first filter, with no reply) is told
 * it is superseded and views nothing; a newer one supersedes the widgets of older replies that view the
 * chat. Widgets of the same reply (two browser tabs) follow the v1 rule: the newest `chat:view` wins.
 */

/** How a widget's view was judged: live (and whom it superseded), not live (and the chat it left), or moot. */
export type WidgetVerdict = { superseded: Tab[] } & (
  { live: false; left: string | null } | { live: true; reply: ReplyClaim } | { live: "stale" }
);

/** A superseded widget stops viewing but keeps its cards until they move or end: it is told how they ended. */
export const SUPERSEDED = { keepCards: true } as const;

/**
 * Replies are ordered by mint time; tokens of one reply are that reply whatever their mint time (Continue
 * mints a new token for the same message), so its widgets in two tabs never supersede each other.
 */
export function isSameOrNewer(reply: ReplyClaim, than: ReplyClaim): boolean {
  return reply.msg === than.msg || reply.mts >= than.mts;
}

export class LiveWidgets {
  private readonly presence: Presence;
  private readonly store: AskStore;
  private readonly clock: Clock;
  /**
   * The latest view of each widget tab still waiting for its step of the chat: a leave (a disconnect)
   * or a newer view that comes meanwhile makes that step moot, so a gone tab never ends up viewing.
   */
  private readonly views = new Map<string, number>();
  private viewCount = 0;

  constructor(options: { presence: Presence; store: AskStore; clock: Clock }) {
    this.presence = options.presence;
    this.store = options.store;
    this.clock = options.clock;
  }

  /** A widget's view is its latest from the moment it arrives. */
  noteView(tabId: string): number {
    const view = ++this.viewCount;
    this.views.set(tabId, view);
    return view;
  }

  forget(tabId: string): void {
    this.views.delete(tabId);
  }

  /**
   * Notes that a widget of this reply was seen (its page requested, its socket viewing) and returns
   * the chat's newest reply. The page handler asks before it serves a page: live or idle.
   */
  noteReply(chatId: string, reply: ReplyClaim): Promise<ReplyClaim> {
    return this.store.noteEmbed(chatId, reply, this.clock.now());
  }

  /** Is this reply's widget the chat's live one? Notes it as seen, as a viewing widget does. */
  async isLive(chatId: string, reply: ReplyClaim): Promise<boolean> {
    return isSameOrNewer(reply, await this.noteReply(chatId, reply));
  }

  /** A widget with no reply (the first filter's) is never live: it views nothing. */
  async neverLive(tab: Tab): Promise<WidgetVerdict> {
    return { live: false, left: await this.presence.leave(tab.id, SUPERSEDED), superseded: [] };
  }

  /**
   * One step of the chat (two widgets viewing at once are judged one after the other, each against the
   * newest reply noted so far): notes the reply, then every widget of an older reply viewing the chat is
   * superseded, whoever's view noted the newer one; this widget is live when its reply is the chat's
   * newest and none newer views.
   */
  async judge(tab: Tab, reply: ReplyClaim, chatId: string, view: number): Promise<WidgetVerdict> {
    const current = () => this.views.get(tab.id) === view;
    // Noted even when the tab left meanwhile: the server has seen this reply's widget.
    const newest = await this.noteReply(chatId, reply);
    const viewers = await this.presence.viewers(chatId);
    const superseded = viewers.filter(
      (viewer) =>
        viewer.id !== tab.id &&
        viewer.chatClaim !== null &&
        (viewer.reply === null || !isSameOrNewer(viewer.reply, newest)),
    );
    for (const viewer of superseded) await this.presence.leave(viewer.id, SUPERSEDED);
    if (!current()) return { live: "stale", superseded };
    if (
      !isSameOrNewer(reply, newest) ||
      viewers.some((viewer) => viewer.reply !== null && !isSameOrNewer(reply, viewer.reply))
    ) {
      return { live: false, left: await this.presence.leave(tab.id, SUPERSEDED), superseded };
    }
    await this.presence.view(tab, chatId);
    // Left while presence wrote (another process's presence answers asynchronously): undo it.
    if (!current()) {
      await this.presence.leave(tab.id);
      return { live: "stale", superseded };
    }
    return { live: true, reply, superseded };
  }
}
