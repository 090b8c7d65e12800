import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { Ask, type AskStatus } from "../../lib/ask.ts";
import type { AskStore } from "./store.ts";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS asks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    chat_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    claimed_by TEXT,
    body TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS asks_status ON asks(status, updated_at);
  CREATE INDEX IF NOT EXISTS asks_chat ON asks(chat_id);
  CREATE TABLE IF NOT EXISTS chats (
    chat_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    recorded_at INTEGER NOT NULL
  );
`;

/** The embedded store: one SQLite file under DATA_DIR, in WAL mode so two instances can share it. */
export class SqliteAskStore implements AskStore {
  private readonly db: DatabaseSync;
  private readonly statements: Record<string, StatementSync>;

  constructor(file: string) {
    if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
    this.db = new DatabaseSync(file);
    this.db.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;");
    this.db.exec(SCHEMA);
    this.statements = {
      upsert: this.db.prepare(
        `INSERT INTO asks (id, status, chat_id, created_at, updated_at, claimed_by, body)
         VALUES (:id, :status, :chatId, :createdAt, :updatedAt, NULL, :body)
         ON CONFLICT(id) DO UPDATE SET status = :status, chat_id = :chatId, updated_at = :updatedAt, body = :body,
           claimed_by = CASE WHEN :status = 'pending' THEN claimed_by ELSE NULL END
         WHERE asks.status = 'pending'`,
      ),
      get: this.db.prepare("SELECT body FROM asks WHERE id = ?"),
      pending: this.db.prepare("SELECT body FROM asks WHERE status = 'pending' ORDER BY created_at"),
      claim: this.db.prepare("UPDATE asks SET claimed_by = ? WHERE id = ? AND status = 'pending' AND claimed_by IS NULL"),
      release: this.db.prepare("UPDATE asks SET claimed_by = NULL WHERE id = ? AND claimed_by = ?"),
      owner: this.db.prepare("SELECT owner FROM chats WHERE chat_id = ?"),
      recordOwner: this.db.prepare("INSERT OR IGNORE INTO chats (chat_id, owner, recorded_at) VALUES (?, ?, ?)"),
      ownedBy: this.db.prepare("SELECT chat_id FROM chats WHERE owner = ?"),
    };
  }

  /** A terminal ask is a tombstone: the WHERE clause of the upsert never lets it be written again. */
  put(ask: Ask): void {
    this.statements.upsert!.run({
      id: ask.id,
      status: ask.status,
      chatId: ask.chatId,
      createdAt: ask.createdAt,
      updatedAt: ask.resolution?.at ?? ask.createdAt,
      body: JSON.stringify({ ...ask, shownTo: null }),
    });
  }

  get(id: string): Ask | null {
    const row = this.statements.get!.get(id) as { body: string } | undefined;
    return row ? parse(row.body) : null;
  }

  pending(): Ask[] {
    return (this.statements.pending!.all() as { body: string }[]).map((row) => parse(row.body));
  }

  list(filter: { status?: AskStatus; chatIds?: readonly string[]; limit?: number }): Ask[] {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.status) {
      where.push("status = ?");
      params.push(filter.status);
    }
    if (filter.chatIds) {
      if (filter.chatIds.length === 0) return [];
      where.push(`chat_id IN (${filter.chatIds.map(() => "?").join(",")})`);
      params.push(...filter.chatIds);
    }
    const sql = `SELECT body FROM asks ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY updated_at DESC LIMIT ?`;
    params.push(filter.limit ?? 200);
    return (this.db.prepare(sql).all(...params) as { body: string }[]).map((row) => parse(row.body));
  }

  claim(id: string, claimant: string): boolean {
    return Number(this.statements.claim!.run(claimant, id).changes) === 1;
  }

  release(id: string, claimant: string): void {
    this.statements.release!.run(id, claimant);
  }

  chatOwner(chatId: string): string | null {
    const row = this.statements.owner!.get(chatId) as { owner: string } | undefined;
    return row?.owner ?? null;
  }

  recordChatOwner(chatId: string, userId: string): string {
    this.statements.recordOwner!.run(chatId, userId, Date.now());
    return this.chatOwner(chatId) ?? userId;
  }

  chatsOwnedBy(userId: string): string[] {
    return (this.statements.ownedBy!.all(userId) as { chat_id: string }[]).map((row) => row.chat_id);
  }

  close(): void {
    this.db.close();
  }
}

function parse(body: string): Ask {
  return Ask.parse(JSON.parse(body));
}
