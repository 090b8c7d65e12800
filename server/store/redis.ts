import type { Redis } from "ioredis";
import type { Ask, AskStatus } from "../../lib/ask.ts";
import { type Clock, systemClock } from "../../lib/clock.ts";
import type { ReplyClaim } from "../broker/ports.ts";
import { ASK_SCRIPTS } from "./redis-ask-scripts.ts";
import { redisScripts, unavailableAs } from "./redis-scripts.ts";
import { type SetAside, setAsideAsks } from "./rows.ts";
import {
  type AskStore,
  type OwnerLinkKeyStore,
  readStart,
  REPLY_START_KEEP_MS,
  type ReplyStarter,
  type RetentionStore,
  writeStart,
} from "./store.ts";

/**
 * The store that several instances share: Redis 7.x (or Valkey), standalone. Every step that reads
 * and then writes is one Lua script, so it is atomic across instances: the one-winner claim, the
 * tombstone rule (a terminal ask is never written again), the first owner of a chat. Keys, under the
 * deployment's prefix (`<REDIS_KEY_PREFIX>store:`):
 *
 * - `ask:<id>` hash: status, chat, updated, claimed (the claimant while an answer is delivered), body (the Ask as JSON)
 * - `history`, `status:<status>`, `chat-asks:<chat>`, `owner-asks:<user>` sorted sets of ask ids by last
 *   change: the listings, each filter answered from one set (never one look-up per chat of a user)
 * - `pending` (by creation, for restore), `terminal` (by end, for retention), `chat-pending:<chat>` (a set)
 * - `chats` hash chat → owner; `chat-titles` hash chat → Open WebUI's title; `chat-seen` sorted set
 *   chat → last view (retention); `settings` hash
 * - `embed:<chat>` hash (msg, mts): the chat's newest reply seen in an embed token (the live widget's);
 *   `embed-seen` sorted set chat → when an embed of it was last noted (retention)
 * - `reply-start:["<chat>","<reply>"]` string: who started that reply (JSON), expiring after REPLY_START_KEEP_MS
 *
 * The scripts (redis-ask-scripts.ts) name keys they build from the prefix, so this runs on one Redis,
 * not a Cluster.
 */

const OWNER_LINK_KID = "owner-link-kid";

export type RedisAskStoreOptions = {
  /** Every key starts with it: several deployments (or test files) can share one Redis. */
  prefix: string;
  log?: (message: string) => void;
  /** The time the store records (when a chat's owner was); the system's without one. */
  clock?: Clock;
};

export class RedisAskStore implements AskStore, RetentionStore, OwnerLinkKeyStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly rows: SetAside<Ask>;
  private readonly clock: Clock;
  private readonly run: ReturnType<typeof redisScripts<typeof ASK_SCRIPTS>>;

  /** Takes a connected client; `close` does not end it (its owner does). */
  constructor(redis: Redis, options: RedisAskStoreOptions) {
    this.redis = redis;
    this.prefix = options.prefix;
    this.rows = setAsideAsks(options.log);
    this.clock = options.clock ?? systemClock();
    this.run = redisScripts(redis, this.prefix, ASK_SCRIPTS);
  }

  /** A terminal ask is a tombstone: the script writes nothing over one. */
  async put(ask: Ask): Promise<boolean> {
    const body = JSON.stringify(ask);
    const written = await this.run(
      "put",
      ask.id,
      ask.status,
      ask.chatId ?? "",
      ask.createdAt,
      ask.resolution?.at ?? ask.createdAt,
      body,
    );
    if (!written) return false;
    this.rows.healed(ask.id);
    return true;
  }

  async get(id: string): Promise<Ask | null> {
    const body = await unavailableAs(this.redis, () =>
      this.redis.hget(this.key(`ask:${id}`), "body"),
    );
    return body === null ? null : this.rows.readJson(id, body);
  }

  async pending(): Promise<Ask[]> {
    return this.rows.readAll(await this.run("pending"));
  }

  async list(filter: {
    status?: AskStatus;
    chatId?: string;
    ownedBy?: string;
    limit?: number;
  }): Promise<Ask[]> {
    return this.rows.readAll(
      await this.run(
        "list",
        filter.status ?? "",
        filter.chatId ?? "",
        filter.ownedBy ?? "",
        filter.limit ?? 200,
      ),
    );
  }

  async claim(id: string, claimant: string): Promise<boolean> {
    return this.run("claim", id, claimant);
  }

  async release(id: string, claimant: string): Promise<void> {
    await this.run("release", id, claimant);
  }

  async chatOwner(chatId: string): Promise<string | null> {
    return unavailableAs(this.redis, () => this.redis.hget(this.key("chats"), chatId));
  }

  async recordChatOwner(chatId: string, userId: string): Promise<string> {
    return this.run("recordOwner", chatId, userId, this.clock.now(), "0");
  }

  async chatViewed(chatId: string, owner: string, at: number): Promise<void> {
    await this.run("recordOwner", chatId, owner, at, "1");
  }

  setAsideRows(): number {
    return this.rows.count;
  }

  /** Only a chat with a recorded owner keeps a title: retention removes both together. */
  async titleChat(chatId: string, title: string): Promise<void> {
    await this.run("titleChat", chatId, title);
  }

  async chatTitles(chatIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(chatIds)];
    if (ids.length === 0) return new Map();
    const titles = await unavailableAs(this.redis, () =>
      this.redis.hmget(this.key("chat-titles"), ...ids),
    );
    return new Map(
      ids.flatMap((id, index) => (titles[index] ? [[id, titles[index]] as const] : [])),
    );
  }

  async noteEmbed(chatId: string, embed: ReplyClaim, at: number): Promise<ReplyClaim> {
    return this.run("noteEmbed", chatId, embed.msg, embed.mts, at);
  }

  /** One key per reply, expiring on its own: a reply start is needed only while its run may ask. */
  async noteReplyStart(
    chatId: string,
    replyId: string,
    starter: ReplyStarter,
    at: number,
  ): Promise<void> {
    const key = this.replyStartKey(chatId, replyId);
    const keep = at + REPLY_START_KEEP_MS - this.clock.now();
    await unavailableAs(this.redis, async () => {
      await (keep > 0
        ? this.redis.set(key, writeStart(starter, at), "PX", keep)
        : this.redis.del(key));
    });
  }

  async replyStarter(
    chatId: string,
    replyId: string,
    notBefore: number,
  ): Promise<ReplyStarter | null> {
    const text = await unavailableAs(this.redis, () =>
      this.redis.get(this.replyStartKey(chatId, replyId)),
    );
    return text === null ? null : readStart(text, notBefore);
  }

  async finishedInReply(chatId: string, replyId: string): Promise<Ask[]> {
    return this.rows.readAll(await this.run("finishedInReply", chatId, replyId));
  }

  async prune(cutoff: number, limit: number): Promise<{ asks: number; chats: number }> {
    return this.run("prune", cutoff, limit);
  }

  async ownerLinkKid(): Promise<string | null> {
    return unavailableAs(this.redis, () => this.redis.hget(this.key("settings"), OWNER_LINK_KID));
  }

  async setOwnerLinkKid(kid: string): Promise<void> {
    await unavailableAs(this.redis, () =>
      this.redis.hset(this.key("settings"), OWNER_LINK_KID, kid),
    );
  }

  async close(): Promise<void> {}

  /** Chat and reply as JSON: ids may hold any character, and no two pairs share a key. */
  private replyStartKey(chatId: string, replyId: string): string {
    return this.key(`reply-start:${JSON.stringify([chatId, replyId])}`);
  }

  private key(name: string): string {
    return this.prefix + name;
  }
}
