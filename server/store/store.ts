import { z } from "zod";
import type { Ask, AskStatus } from "../../lib/ask.ts";
import type { ReplyStarter } from "../../lib/policy.ts";
import { type AckError, fail } from "../../lib/protocol.ts";
import type { ReplyClaim } from "../broker/ports.ts";

/**
 * Where asks, chat ownership and history live, behind one interface per store. The embedded
 * default is SQLite (one process); Redis lets several instances share one store. Every operation is
 * asynchronous for Redis's sake; SQLite does its work synchronously inside them, so a write issued
 * before an await has happened by the time the caller goes on. `claim` is the atomic pending →
 * resolving step that lets exactly one answer win, even between instances.
 */
export interface AskStore {
  /** Writes the ask unless a terminal one is stored already (a tombstone); true when it wrote. */
  put(ask: Ask): Promise<boolean>;
  get(id: string): Promise<Ask | null>;
  pending(): Promise<Ask[]>;
  /** Newest first; `chatId` keeps one chat's asks, `ownedBy` those of the chats a user owns. */
  list(filter: {
    status?: AskStatus;
    chatId?: string;
    ownedBy?: string;
    limit?: number;
  }): Promise<Ask[]>;
  /** True for exactly one caller until `release` or a terminal `put` (atomic, even across instances). */
  claim(id: string, claimant: string): Promise<boolean>;
  release(id: string, claimant: string): Promise<void>;
  chatOwner(chatId: string): Promise<string | null>;
  /** Records the owner if the chat has none yet; returns the owner in force. */
  recordChatOwner(chatId: string, userId: string): Promise<string>;
  close(): Promise<void>;

  /**
   * Notes that a tab viewed the chat (retention keeps chats viewed recently). `owner` must be the chat's
   * recorded owner: a row retention removed meanwhile is written again with it, never with a mere viewer.
   */
  chatViewed(chatId: string, owner: string, at: number): Promise<void>;
  /** How many stored rows did not parse and were set aside (skipped) since this store was opened. */
  setAsideRows(): number;

  /**
   * Notes an embed of the chat, for reply `msg` minted at `mts` (epoch ms), and returns the newest one
   * seen for the chat, this one included: the live widget's reply (docs/ARCHITECTURE.md#live-and-idle-widgets). Atomic, even across
   * instances.
   */
  noteEmbed(chatId: string, embed: ReplyClaim, at: number): Promise<ReplyClaim>;
  /** The finished asks whose card was last shown in this reply of the chat (its widget's summaries), oldest first. */
  finishedInReply(chatId: string, replyId: string): Promise<Ask[]>;

  /**
   * Notes who started this reply of the chat (the filter's signed reply start): the run of that reply
   * is judged by that user (lib/policy.ts). A later start of the same reply (Continue) replaces it.
   */
  noteReplyStart(chatId: string, replyId: string, starter: ReplyStarter, at: number): Promise<void>;
  /**
   * Who started this reply, as last noted at `notBefore` or later, or null: no reply start vouches for
   * it. Starts older than REPLY_START_KEEP_MS may be forgotten.
   */
  replyStarter(chatId: string, replyId: string, notBefore: number): Promise<ReplyStarter | null>;

  /** The chat's title as Open WebUI knows it (its filter says), for a chat whose owner is recorded; kept as long as the chat. */
  titleChat(chatId: string, title: string): Promise<void>;
  /** The titles known for these chats (those without one are absent). */
  chatTitles(chatIds: readonly string[]): Promise<Map<string, string>>;
}

export type { ReplyStarter };

/**
 * How long a reply start vouches for its run: a run waits on its asks for an hour at most (ask_user), so
 * a day covers a restart in between; older starts are forgotten.
 */
export const REPLY_START_KEEP_MS = 24 * 3_600_000;

const StoredStart = z.object({
  userId: z.string().min(1),
  name: z.string().optional(),
  at: z.number(),
});

/** A reply start as a store keeps it (JSON): who, and when it was noted. */
export function writeStart(starter: ReplyStarter, at: number): string {
  return JSON.stringify({ ...starter, at });
}

/** A stored reply start noted at `notBefore` or later; one that does not parse vouches for nothing. */
export function readStart(text: string, notBefore: number): ReplyStarter | null {
  try {
    const parsed = StoredStart.safeParse(JSON.parse(text));
    if (!parsed.success || parsed.data.at < notBefore) return null;
    const { at: _at, ...starter } = parsed.data;
    return starter;
  } catch {
    return null;
  }
}

/** The store cannot be reached now (Redis is down): nothing was read or written; it may be back soon. */
export class StoreUnavailable extends Error {}

/**
 * The one mapping of a store that is away to a refusal: UNAVAILABLE, worded by `say` from the store's
 * message (what was not done, and what to do). Any other error is not this refusal: null.
 */
export function unavailable(error: unknown, say: (why: string) => string): AckError | null {
  return error instanceof StoreUnavailable ? fail("UNAVAILABLE", say(error.message)) : null;
}

/** What retention needs: terminal history and unviewed chats older than a cutoff go, a batch at a time. */
export interface RetentionStore {
  /**
   * Deletes at most `limit` terminal asks last changed before `cutoff`, at most `limit` chats not viewed
   * since (and with no pending ask), and at most `limit` newest-embed notes not renewed since.
   */
  prune(cutoff: number, limit: number): Promise<{ asks: number; chats: number }>;
}

/** The key id every valid owner link carries; replacing it revokes every owner link minted before. */
export interface OwnerLinkKeyStore {
  ownerLinkKid(): Promise<string | null>;
  setOwnerLinkKid(kid: string): Promise<void>;
}

/** Everything the service keeps in its store. */
export type ServiceStore = AskStore & RetentionStore & OwnerLinkKeyStore;
