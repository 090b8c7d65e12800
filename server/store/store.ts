import type { Ask, AskStatus } from "../../lib/ask.ts";

/**
 * Where asks, chat ownership and history live (cal.com-style repository interface). The embedded
 * default is SQLite; `claim` is the atomic pending → resolving step that lets exactly one answer win,
 * even between two server instances sharing the store.
 */
export interface AskStore {
  put(ask: Ask): void;
  get(id: string): Ask | null;
  pending(): Ask[];
  list(filter: { status?: AskStatus; chatIds?: readonly string[]; limit?: number }): Ask[];
  /** True for exactly one caller until `release` or a terminal `put`. */
  claim(id: string, claimant: string): boolean;
  release(id: string, claimant: string): void;
  chatOwner(chatId: string): string | null;
  /** Records the owner if the chat has none yet; returns the owner in force. */
  recordChatOwner(chatId: string, userId: string): string;
  chatsOwnedBy(userId: string): string[];
  close(): void;
}
