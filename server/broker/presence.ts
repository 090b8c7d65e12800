import { type Ask, inReply } from "../../lib/ask.ts";
import { newestWhoMaySee } from "../../lib/policy.ts";
import type { AskClose } from "../../lib/protocol.ts";
import { Emitter } from "../events.ts";
import type { CardEvents, Placement, Presence, Tab } from "./ports.ts";

/** How many ended asks the in-memory presence remembers. */
const ENDED_KEPT = 10_000;

/**
 * Presence for one instance, in memory: a restart forgets it, as it forgets the sockets. Each
 * operation is atomic (no await inside), as one Redis transaction would be; its cards are told in it.
 */
export class MemoryPresence extends Emitter<CardEvents> implements Presence {
  /** Viewing tabs per chat, oldest first. */
  private readonly viewing = new Map<string, Tab[]>();
  private readonly tabChat = new Map<string, string>();
  private readonly shown = new Map<string, string>();
  /** Each tab's asks: a tab that leaves its chat drops their cards (docs/PROTOCOL.md#server--client), so they are placed again. */
  private readonly held = new Map<string, Set<string>>();
  /** The latest ended asks, never placed again (an older replay is named by the store). */
  private readonly ended = new Set<string>();

  async view(tab: Tab, chatId: string): Promise<string | null> {
    const previous = this.detach(tab.id);
    if (previous !== null && previous !== chatId) this.release(tab.id);
    const list = this.viewing.get(chatId) ?? [];
    list.push(tab);
    this.viewing.set(chatId, list);
    this.tabChat.set(tab.id, chatId);
    return previous;
  }

  async leave(tabId: string, options: { keepCards?: boolean } = {}): Promise<string | null> {
    const chatId = this.detach(tabId);
    if (chatId !== null && !options.keepCards) this.release(tabId);
    return chatId;
  }

  private release(tabId: string): void {
    for (const askId of this.held.get(tabId) ?? [])
      if (this.shown.get(askId) === tabId) this.shown.delete(askId);
    this.held.delete(tabId);
  }

  private detach(tabId: string): string | null {
    const chatId = this.tabChat.get(tabId);
    if (chatId === undefined) return null;
    this.tabChat.delete(tabId);
    const list = this.viewing.get(chatId) ?? [];
    const index = list.findIndex((tab) => tab.id === tabId);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.viewing.delete(chatId);
    return chatId;
  }

  async viewers(chatId: string): Promise<readonly Tab[]> {
    return [...(this.viewing.get(chatId) ?? [])];
  }

  async shownTo(askId: string): Promise<string | null> {
    return this.shown.get(askId) ?? null;
  }

  async place(ask: Ask & { chatId: string }, chatOwner: string | null): Promise<Placement> {
    if (this.ended.has(ask.id)) return { tab: null, moved: false };
    const viewers = this.viewing.get(ask.chatId) ?? [];
    const target = newestWhoMaySee(viewers, ask, chatOwner);
    const holder = this.shown.get(ask.id) ?? null;
    if ((target?.id ?? null) === holder) return { tab: target, moved: false };
    if (holder !== null) this.held.get(holder)?.delete(ask.id);
    if (target === null) this.shown.delete(ask.id);
    else {
      this.shown.set(ask.id, target.id);
      this.held.set(target.id, (this.held.get(target.id) ?? new Set()).add(ask.id));
    }
    if (holder !== null && this.tabChat.get(holder) === ask.chatId)
      this.emit("card:close", holder, { askId: ask.id, reason: "handed-off" });
    if (target !== null) this.emit("card:show", target.id, inReply(ask, target.reply?.msg ?? null));
    return { tab: target, moved: true };
  }

  async forget(askId: string, close: AskClose): Promise<string | null> {
    const tabId = this.shown.get(askId) ?? null;
    this.shown.delete(askId);
    this.ended.add(askId);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.values().next().value!);
    if (tabId !== null) {
      this.held.get(tabId)?.delete(askId);
      this.emit("card:close", tabId, close);
    }
    return tabId;
  }

  /** How many tabs view a chat now (the benchmark waits on it after disconnects). */
  get viewingTabs(): number {
    return this.tabChat.size;
  }
}
