// One unreadable row must not break the server (issue 11, item 11): before, a bad pending row made the
// start throw (and main.ts exit 0), and a bad answered row made asks:list throw with no ack. Now such
// rows are set aside: logged with their id, skipped, and counted in /healthz for an owner.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, inject, it } from "vitest";
import { SqliteAskStore } from "../../server/store/sqlite.ts";
import { question } from "../support/ask-fixtures.ts";
import { newChat, useTabs } from "../support/on-gateway.ts";
import { startTestServer, type TestServer, waitConnected } from "../support/tabs.ts";

const { openOn } = useTabs();
const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose();
});

/** A DATA_DIR whose store holds `good` asks and then `bad` rows written as a hand edit or another version might leave them. */
async function dataDirWith(
  good: Parameters<SqliteAskStore["put"]>[0][],
  bad: { id: string; status: string; chatId: string; body: string }[],
): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "asks-unreadable-"));
  const file = path.join(dir, "asks.sqlite");
  const store = new SqliteAskStore(file);
  for (const ask of good) await store.put(ask);
  await store.close();
  const db = new DatabaseSync(file);
  for (const row of bad) {
    db.prepare(
      "INSERT INTO asks (id, status, chat_id, created_at, updated_at, claimed_by, body) VALUES (?, ?, ?, ?, ?, NULL, ?)",
    ).run(row.id, row.status, row.chatId, Date.now(), Date.now(), row.body);
  }
  db.close();
  return dir;
}

async function start(dataDir: string): Promise<TestServer> {
  const server = await startTestServer({
    gatewayUrl: inject("gatewayUrl"),
    gatewayToken: inject("gatewayToken"),
    dataDir,
  });
  servers.push(server);
  await waitConnected(server);
  return server;
}

async function healthz(server: TestServer, token?: string): Promise<Record<string, unknown>> {
  const response = await fetch(
    `${server.url}/healthz`,
    token ? { headers: { authorization: `Bearer ${token}` } } : {},
  );
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe("an unreadable stored row", () => {
  it("a bad pending row no longer stops the start: it is set aside, logged with its id, and counted in /healthz", async () => {
    const chatId = newChat();
    const dir = await dataDirWith(
      [],
      [
        {
          id: "bad-pending",
          status: "pending",
          chatId,
          body: JSON.stringify({ id: "bad-pending", kind: "question", status: "pending" }),
        },
      ],
    );
    const server = await start(dir);
    expect(
      server.logs.some((line) => line.includes("set aside") && line.includes("bad-pending")),
    ).toBe(true);
    expect(server.broker.getPending("bad-pending")).toBeUndefined();
    expect(await healthz(server)).toEqual({ status: "degraded" });
    expect(await healthz(server, await server.token("owner"))).toMatchObject({
      status: "degraded",
      setAsideRows: 1,
      gateway: { connected: true },
    });
    // The server works: a tab connects and views the chat.
    await openOn(server, chatId);
  });

  it("a bad answered row no longer breaks asks:list: the rest of the history is listed and the row is counted", async () => {
    const chatId = newChat();
    const answered = question("good-answered", chatId, {
      status: "answered",
      resolution: { by: "owner", at: Date.now(), summary: "SQLite", tabId: null },
    });
    const dir = await dataDirWith(
      [answered],
      [{ id: "bad-answered", status: "answered", chatId, body: "{truncated" }],
    );
    const server = await start(dir);
    const owner = await openOn(server, null);
    const listed = (await owner.list("all")).map((ask) => ask.id);
    expect(listed).toContain("good-answered");
    expect(listed).not.toContain("bad-answered");
    expect(server.logs.filter((line) => line.includes("bad-answered"))).toEqual([
      expect.stringContaining("not valid JSON"),
    ]);
    expect(await healthz(server, await server.token("owner"))).toMatchObject({ setAsideRows: 1 });
  });
});

describe("/healthz", () => {
  it("without a token it says only ok or degraded; the details (Gateway status, set-aside rows) need an owner's token", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "asks-healthz-"));
    const server = await start(dir);
    expect(await healthz(server)).toEqual({ status: "ok" });
    expect(await healthz(server, "not-a-token")).toEqual({ status: "ok" });
    expect(await healthz(server, await server.token("someone"))).toEqual({ status: "ok" });
    expect(await healthz(server, await server.token("owner", newChat()))).toEqual({ status: "ok" });
    expect(await healthz(server, await server.token("owner"))).toEqual({
      status: "ok",
      setAsideRows: 0,
      gateway: expect.objectContaining({ connected: true }),
    });
  });
});
