import type { Presence, Tab } from "./ports.ts";

/**
 * Presence for one instance, in memory: a restart forgets it, as it forgets the sockets. Each
 * operation is atomic (no await inside), as one Redis transaction would be.
 */
export class MemoryPresence implements Presence {
  /** Viewing tabs per chat, oldest first. */
  private readonly viewing = new Map<string, Tab[]>();
  private readonly tabChat = new Map<string, string>();
  private readonly shown = new Map<string, string>();

  async view(tab: Tab, chatId: string): Promise<string | null> {
    const previous = this.detach(tab.id);
    const list = this.viewing.get(chatId) ?? [];
    list.push(tab);
    this.viewing.set(chatId, list);
    this.tabChat.set(tab.id, chatId);
    return previous;
  }

  async leave(tabId: string): Promise<string | null> {
    return this.detach(tabId);
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

  async chatOf(tabId: string): Promise<string | null> {
    return this.tabChat.get(tabId) ?? null;
  }

  async shownTo(askId: string): Promise<string | null> {
    return this.shown.get(askId) ?? null;
  }

  async show(askId: string, tabId: string | null, from: string | null): Promise<boolean> {
    if ((this.shown.get(askId) ?? null) !== from) return false;
    if (tabId === null) this.shown.delete(askId);
    else this.shown.set(askId, tabId);
    return true;
  }

  async forget(askId: string): Promise<string | null> {
    const tabId = this.shown.get(askId) ?? null;
    this.shown.delete(askId);
    return tabId;
  }

  /** How many tabs view a chat now (the benchmark waits on it after disconnects). */
  get viewingTabs(): number {
    return this.tabChat.size;
  }
}
