import type { Ask, AskStatus } from "../../lib/ask.ts";
import { type Clock, systemClock } from "../../lib/clock.ts";
import type { ReplyClaim } from "../broker/ports.ts";
import { PrivateDatabase } from "./private-database.ts";
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
import { WalCheckpointer } from "./wal-checkpointer.ts";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS asks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    chat_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    claimed_by TEXT, -- unused: claims live in memory (kept for files of earlier versions)
    body TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS asks_status ON asks(status, updated_at);
  CREATE INDEX IF NOT EXISTS asks_chat ON asks(chat_id);
  CREATE TABLE IF NOT EXISTS chats (
    chat_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    recorded_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS chats_owner ON chats(owner);
  CREATE TABLE IF NOT EXISTS chat_embeds (
    chat_id TEXT PRIMARY KEY,
    newest_msg TEXT NOT NULL,
    newest_mts INTEGER NOT NULL,
    noted_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS reply_starts (
    chat_id TEXT NOT NULL,
    reply_id TEXT NOT NULL,
    starter TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    PRIMARY KEY (chat_id, reply_id)
  );
  CREATE INDEX IF NOT EXISTS reply_starts_at ON reply_starts(started_at);
`;

const TERMINAL_STATUSES = "('answered', 'cancelled', 'expired', 'denied', 'ended-as-text')";
const OWNER_LINK_KID = "owner-link-kid";

const STATEMENTS = {
  upsert: `INSERT INTO asks (id, status, chat_id, created_at, updated_at, claimed_by, body)
    VALUES (:id, :status, :chatId, :createdAt, :updatedAt, NULL, :body)
    ON CONFLICT(id) DO UPDATE SET status = :status, chat_id = :chatId, updated_at = :updatedAt, body = :body
    WHERE asks.status = 'pending'`,
  get: "SELECT id, body FROM asks WHERE id = ?",
  pending: "SELECT id, body FROM asks WHERE status = 'pending' ORDER BY created_at",
  pendingIds: "SELECT id FROM asks WHERE status = 'pending'",
  owner: "SELECT owner FROM chats WHERE chat_id = ?",
  recordOwner: "INSERT OR IGNORE INTO chats (chat_id, owner, recorded_at) VALUES (?, ?, ?)",
  chatViewed: `INSERT INTO chats (chat_id, owner, recorded_at, last_viewed_at) VALUES (:chatId, :owner, :at, :at)
    ON CONFLICT(chat_id) DO UPDATE SET last_viewed_at = MAX(COALESCE(last_viewed_at, 0), excluded.last_viewed_at)`,
  pruneAsks: `DELETE FROM asks WHERE rowid IN (
    SELECT rowid FROM asks WHERE status IN ${TERMINAL_STATUSES} AND updated_at < :cutoff LIMIT :limit)`,
  // A chat with a pending ask keeps its owner: the guest rules of that ask depend on it.
  pruneChats: `DELETE FROM chats WHERE chat_id IN (
    SELECT chat_id FROM chats WHERE COALESCE(last_viewed_at, recorded_at) < :cutoff
      AND NOT EXISTS (SELECT 1 FROM asks WHERE asks.chat_id = chats.chat_id AND asks.status = 'pending')
    LIMIT :limit)`,
  noteEmbed: `INSERT INTO chat_embeds (chat_id, newest_msg, newest_mts, noted_at) VALUES (:chatId, :msg, :mts, :at)
    ON CONFLICT(chat_id) DO UPDATE SET
      newest_msg = CASE WHEN excluded.newest_mts > newest_mts THEN excluded.newest_msg ELSE newest_msg END,
      newest_mts = MAX(newest_mts, excluded.newest_mts),
      noted_at = MAX(noted_at, excluded.noted_at)
    RETURNING newest_msg, newest_mts`,
  finishedInReply:
    "SELECT id, body FROM asks WHERE chat_id = ? AND status != 'pending' AND json_extract(body, '$.replyId') = ? ORDER BY updated_at",
  pruneEmbeds:
    "DELETE FROM chat_embeds WHERE chat_id IN (SELECT chat_id FROM chat_embeds WHERE noted_at < :cutoff LIMIT :limit)",
  noteReplyStart: `INSERT INTO reply_starts (chat_id, reply_id, starter, started_at) VALUES (?, ?, ?, ?)
    ON CONFLICT(chat_id, reply_id) DO UPDATE SET starter = excluded.starter, started_at = excluded.started_at`,
  replyStarter: "SELECT starter FROM reply_starts WHERE chat_id = ? AND reply_id = ?",
  pruneReplyStarts: "DELETE FROM reply_starts WHERE started_at < ?",
  titleChat: "UPDATE chats SET title = ? WHERE chat_id = ?",
  // One JSON parameter, however many chats: the statement's size is fixed.
  chatTitles:
    "SELECT chat_id, title FROM chats WHERE title IS NOT NULL AND chat_id IN (SELECT value FROM json_each(?))",
  setting: "SELECT value FROM settings WHERE name = ?",
  setSetting:
    "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
};

export type SqliteAskStoreOptions = {
  /** Where a row that no longer parses is reported (once per id). */
  log?: (message: string) => void;
  /**
   * The time the store records (when a chat's owner was), the system's without one. With a clock, the
   * WAL is also checkpointed on a timer of its own (every CHECKPOINT_EVERY_MS), from a thread of its
   * own (wal-checkpointer.ts), instead of inside whichever write crosses SQLite's threshold: that write
   * is an answer or a card on its way, and a checkpoint syncs the database file. Without one, SQLite
   * checkpoints as it writes.
   */
  clock?: Clock;
};

export const CHECKPOINT_EVERY_MS = 5_000;

/**
 * The embedded store of one instance: one of DATA_DIR's private SQLite files (PrivateDatabase). A row
 * that no longer parses (a hand edit, a schema from another version) is set aside: reported once with
 * its id, skipped, and counted. Several instances share Redis instead (redis.ts), not this file.
 */
export class SqliteAskStore implements AskStore, RetentionStore, OwnerLinkKeyStore {
  private readonly database: PrivateDatabase<keyof typeof STATEMENTS>;
  private readonly rows: SetAside<Ask>;
  /** Answers being delivered: ask id → claimant. */
  private readonly claims = new Map<string, string>();
  /**
   * The ids whose row is pending, read when the file is opened and kept by `put`: one process owns the
   * file, so a claim needs no read of it on the way of an answer.
   */
  private pendingIds: Set<string>;
  private readonly clock: Clock;
  private readonly checkpointer: WalCheckpointer | null = null;

  constructor(file: string, options: SqliteAskStoreOptions = {}) {
    this.rows = setAsideAsks(options.log);
    this.database = new PrivateDatabase(file, {
      schema: SCHEMA,
      statements: STATEMENTS,
      // Databases from before retention have no last view time, from before Open WebUI's titles no title.
      added: { chats: { last_viewed_at: "INTEGER", title: "TEXT" } },
      pragmas: "PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;",
    });
    this.clock = options.clock ?? systemClock();
    if (options.clock && this.database.onDisk) {
      this.database.exec("PRAGMA wal_autocheckpoint = 0");
      this.checkpointer = new WalCheckpointer(file, {
        clock: options.clock,
        everyMs: CHECKPOINT_EVERY_MS,
        log: this.rows.log,
        // Its thread is gone: SQLite checkpoints as it writes again, rather than the WAL growing.
        lost: () => this.database.exec("PRAGMA wal_autocheckpoint = 1000"),
      });
    }
    this.pendingIds = this.readPendingIds();
  }

  private readPendingIds(): Set<string> {
    return new Set(
      (this.database.statements.pendingIds.all() as { id: string }[]).map((row) => row.id),
    );
  }

  /** A terminal ask is a tombstone: the WHERE clause of the upsert never lets it be written again. */
  async put(ask: Ask): Promise<boolean> {
    const written = this.database.statements.upsert.run({
      id: ask.id,
      status: ask.status,
      chatId: ask.chatId,
      createdAt: ask.createdAt,
      updatedAt: ask.resolution?.at ?? ask.createdAt,
      body: JSON.stringify(ask),
    });
    if (Number(written.changes) !== 1) return false;
    if (ask.status === "pending") {
      this.pendingIds.add(ask.id);
    } else {
      this.pendingIds.delete(ask.id);
      this.claims.delete(ask.id);
    }
    // A set-aside pending row that its source sent again (a backfill) is readable from now on.
    this.rows.healed(ask.id);
    return true;
  }

  async get(id: string): Promise<Ask | null> {
    const row = this.database.statements.get.get(id) as Row | undefined;
    return row ? this.rows.readJson(row.id, row.body) : null;
  }

  async pending(): Promise<Ask[]> {
    return this.rows.readAll(this.database.statements.pending.all() as Row[]);
  }

  /** A user's chats are a subquery here, never one parameter per chat: the statement's size is fixed. */
  async list(filter: {
    status?: AskStatus;
    chatId?: string;
    ownedBy?: string;
    limit?: number;
  }): Promise<Ask[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.status) {
      where.push("status = ?");
      params.push(filter.status);
    }
    if (filter.chatId !== undefined) {
      where.push("chat_id = ?");
      params.push(filter.chatId);
    }
    if (filter.ownedBy !== undefined) {
      where.push("chat_id IN (SELECT chat_id FROM chats WHERE owner = ?)");
      params.push(filter.ownedBy);
    }
    const sql = `SELECT id, body FROM asks ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY updated_at DESC LIMIT ?`;
    params.push(filter.limit ?? 200);
    return this.rows.readAll(this.database.prepare(sql).all(...params) as Row[]);
  }

  /**
   * One process owns the file (several instances share Redis instead), so the claim lives in memory:
   * no read or write of the file, and no WAL checkpoint, on the way of an answer. It ends with a
   * terminal `put`, so a process that dies while delivering leaves nothing that blocks the next answer
   * after its restart.
   */
  async claim(id: string, claimant: string): Promise<boolean> {
    if (this.claims.has(id) || !this.pendingIds.has(id)) return false;
    this.claims.set(id, claimant);
    return true;
  }

  async release(id: string, claimant: string): Promise<void> {
    if (this.claims.get(id) === claimant) this.claims.delete(id);
  }

  async chatOwner(chatId: string): Promise<string | null> {
    return this.ownerOf(chatId);
  }

  private ownerOf(chatId: string): string | null {
    const row = this.database.statements.owner.get(chatId) as { owner: string } | undefined;
    return row?.owner ?? null;
  }

  async recordChatOwner(chatId: string, userId: string): Promise<string> {
    this.database.statements.recordOwner.run(chatId, userId, this.clock.now());
    return this.ownerOf(chatId) ?? userId;
  }

  async chatViewed(chatId: string, owner: string, at: number): Promise<void> {
    this.database.statements.chatViewed.run({ chatId, owner, at });
  }

  setAsideRows(): number {
    return this.rows.count;
  }

  async noteEmbed(chatId: string, embed: ReplyClaim, at: number): Promise<ReplyClaim> {
    const row = this.database.statements.noteEmbed.get({
      chatId,
      msg: embed.msg,
      mts: embed.mts,
      at,
    }) as { newest_msg: string; newest_mts: number };
    return { msg: row.newest_msg, mts: row.newest_mts };
  }

  async finishedInReply(chatId: string, replyId: string): Promise<Ask[]> {
    return this.rows.readAll(
      this.database.statements.finishedInReply.all(chatId, replyId) as Row[],
    );
  }

  async noteReplyStart(
    chatId: string,
    replyId: string,
    starter: ReplyStarter,
    at: number,
  ): Promise<void> {
    this.database.statements.noteReplyStart.run(chatId, replyId, writeStart(starter, at), at);
  }

  async replyStarter(
    chatId: string,
    replyId: string,
    notBefore: number,
  ): Promise<ReplyStarter | null> {
    const row = this.database.statements.replyStarter.get(chatId, replyId) as
      { starter: string } | undefined;
    return row ? readStart(row.starter, notBefore) : null;
  }

  async titleChat(chatId: string, title: string): Promise<void> {
    this.database.statements.titleChat.run(title, chatId);
  }

  async chatTitles(chatIds: readonly string[]): Promise<Map<string, string>> {
    if (chatIds.length === 0) return new Map();
    const rows = this.database.statements.chatTitles.all(JSON.stringify([...new Set(chatIds)])) as {
      chat_id: string;
      title: string;
    }[];
    return new Map(rows.map((row) => [row.chat_id, row.title]));
  }

  async prune(cutoff: number, limit: number): Promise<{ asks: number; chats: number }> {
    const asks = Number(this.database.statements.pruneAsks.run({ cutoff, limit }).changes);
    const chats = Number(this.database.statements.pruneChats.run({ cutoff, limit }).changes);
    // A chat nobody embedded for as long has no widget to order: a later one starts a new note.
    this.database.statements.pruneEmbeds.run({ cutoff, limit });
    this.database.statements.pruneReplyStarts.run(this.clock.now() - REPLY_START_KEEP_MS);
    return { asks, chats };
  }

  async ownerLinkKid(): Promise<string | null> {
    const row = this.database.statements.setting.get(OWNER_LINK_KID) as
      { value: string } | undefined;
    return row?.value ?? null;
  }

  async setOwnerLinkKid(kid: string): Promise<void> {
    this.database.statements.setSetting.run(OWNER_LINK_KID, kid);
  }

  /** Runs `work` as one transaction: many writes for the price of one commit (bulk loads, the retention soak). */
  inTransaction<T>(work: () => T): T {
    try {
      return this.database.inTransaction(work);
    } catch (error) {
      // The rolled-back writes changed no row: what is pending is what the file says again.
      this.pendingIds = this.readPendingIds();
      throw error;
    }
  }

  async close(): Promise<void> {
    // Its connection first: the last one to close (this store's) checkpoints what is left.
    await this.checkpointer?.close();
    this.database.close();
  }
}

type Row = { id: string; body: string };
