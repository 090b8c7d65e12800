import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { filterSecret } from "../auth/keys.ts";
import { mintActToken, mintTabToken, secretKey, verifyActToken } from "../auth/tokens.ts";
import type { ReplyStart } from "../broker/ports.ts";
import { StoreUnavailable } from "../store/store.ts";
import {
  createFilterRoute,
  FILTER_SIGNATURE_HEADER,
  filterKey,
  signFilterRequest,
} from "./filter-route.ts";

const SECRET = "s".repeat(40);
const NOW = 1_700_000_000_000;
/** What the filter's valve holds: the filter's own secret, derived from AUTH_SECRET. */
const key = filterKey(filterSecret(SECRET));
/** A valve that still holds AUTH_SECRET itself. */
const legacyKey = filterKey(SECRET);
/** The server's own key (AUTH_SECRET's): act tokens are signed with it, never with the filter's. */
const tabKey = secretKey(SECRET);
const logged: string[] = [];
const started: ReplyStart[] = [];
const titled: [string, string][] = [];
let failWith: Error | null = null;
let server: Server;
let url: string;

beforeAll(async () => {
  const route = createFilterRoute({
    key,
    legacyKey,
    now: () => NOW,
    async replyStarted(start) {
      if (failWith) throw failWith;
      started.push(start);
    },
    mintAct: (start) =>
      mintActToken(tabKey, {
        userId: start.userId,
        chat: start.chatId,
        reply: start.reply,
        ttlSeconds: 3600,
        now: NOW,
      }),
    async chatTitled(chatId, title) {
      titled.push([chatId, title]);
    },
    log: (line) => logged.push(line),
  });
  server = createServer((request, response) =>
    route.handles(request) ? route.handle(request, response) : response.writeHead(404).end(),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  started.length = 0;
  titled.length = 0;
  failWith = null;
});

const START = { chatId: "c1", replyId: "m1", userId: "u1", startedAt: NOW };

async function post(
  body: string,
  signature: string | null = signFilterRequest(key, body, NOW),
  method = "POST",
  path = "/openwebui/replies",
) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(signature === null ? {} : { [FILTER_SIGNATURE_HEADER]: signature }),
    },
    body: method === "GET" ? undefined : body,
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      ok: boolean;
      act?: string;
      error?: { code: string; message: string };
    },
  };
}

describe("POST /openwebui/replies", () => {
  it("takes a reply's start signed by the filter: the chat's user and the reply, ordered by its start", async () => {
    expect(await post(JSON.stringify(START))).toEqual({
      status: 200,
      body: { ok: true, act: expect.any(String) },
    });
    expect(started).toEqual([{ chatId: "c1", userId: "u1", reply: { msg: "m1", mts: NOW } }]);
  });

  it("answers a reply's start with the act token of that reply's user, which only the server can sign", async () => {
    const { body } = await post(JSON.stringify(START));
    const rules = { maxTokenDays: 30, now: () => NOW };
    expect(await verifyActToken(body.act!, tabKey, rules)).toEqual({
      userId: "u1",
      chat: "c1",
      msg: "m1",
    });
    // The widget's own token, stored on the message, never acts: neither signed by the filter's key
    // nor by the server's without the act scope.
    const stored = await mintTabToken(tabKey, {
      userId: "u1",
      chat: "c1",
      reply: { msg: "m1", mts: NOW },
      ttlSeconds: 3600,
      now: NOW,
    });
    await expect(verifyActToken(stored, tabKey, rules)).rejects.toThrow(/not an act token/);
    const byFilter = await mintTabToken(secretKey(filterSecret(SECRET)), {
      userId: "u1",
      chat: "c1",
      reply: { msg: "m1", mts: NOW },
      ttlSeconds: 3600,
      now: NOW,
      scope: "act",
    });
    await expect(verifyActToken(byFilter, tabKey, rules)).rejects.toThrow(/signature/);
  });

  it("takes the chat's owner as Open WebUI records it, beside the reply's user", async () => {
    await post(JSON.stringify({ ...START, chatOwnerId: "owner-1" }));
    expect(started).toMatchObject([{ userId: "u1", chatOwnerId: "owner-1" }]);
    expect((await post(JSON.stringify({ ...START, chatOwnerId: "" }))).status).toBe(400);
  });

  it("takes the reply's user's name, as one clean line (no name when nothing is left of it): the run's cards show it", async () => {
    await post(JSON.stringify({ ...START, userName: " Alice\u202e  Liddell\n" }));
    await post(JSON.stringify({ ...START, userName: " \u0000 " }));
    expect(started.map((start) => start.userName)).toEqual(["Alice Liddell", undefined]);
  });

  it("takes the chat's title with it, as one clean line: text from users", async () => {
    expect(
      (
        await post(
          JSON.stringify({ ...START, title: "  Q3 re\u200bport\u202e\u200f: <b>draft</b>\n " }),
        )
      ).status,
    ).toBe(200);
    expect(started.at(-1)?.title).toBe("Q3 report: <b>draft</b>");
    expect(
      (await post(JSON.stringify({ ...START, title: " \u0000 " }))).body.error?.message,
    ).toMatch(/title/);
  });

  it("signs as the filter does (the same vector is checked in the filter's own Python tests)", () => {
    const body = '{"chatId":"c1","replyId":"m1","userId":"u1","startedAt":1700000000000}';
    expect(signFilterRequest(filterKey(SECRET), body, NOW)).toBe(
      "t=1700000000,v1=1223c034bd677d30c2f59f00bed7d7ec6cab40f8105dd9b74f97b7bcfa0ed278",
    );
  });

  it("takes a valve that still holds AUTH_SECRET itself, and says once how to take it out of Open WebUI", async () => {
    logged.length = 0;
    const body = JSON.stringify(START);
    expect((await post(body, signFilterRequest(legacyKey, body, NOW))).status).toBe(200);
    expect((await post(body, signFilterRequest(legacyKey, body, NOW))).status).toBe(200);
    expect(started).toHaveLength(2);
    expect(logged).toEqual([expect.stringContaining("run npm run connect-openwebui")]);
    expect((await post(body, signFilterRequest(key, body, NOW))).status).toBe(200);
    expect(logged).toHaveLength(1);
  });

  it("refuses, and records nothing, without the filter's signature: none, another key's, a tab token's key, a changed body, an old one", async () => {
    const body = JSON.stringify(START);
    const tampered = JSON.stringify({ ...START, userId: "mallory" });
    const refusals = [
      await post(body, null),
      await post(body, "v1=abc"),
      await post(body, signFilterRequest(filterKey("o".repeat(40)), body, NOW)),
      await post(body, signFilterRequest(Buffer.from(SECRET), body, NOW)),
      await post(body, signFilterRequest(Buffer.from(filterSecret(SECRET)), body, NOW)),
      await post(tampered, signFilterRequest(key, body, NOW)),
      await post(body, signFilterRequest(key, body, NOW - 6 * 60_000)),
      await post(body, signFilterRequest(key, body, NOW + 6 * 60_000)),
      await post(body, `${signFilterRequest(key, body, NOW)}0`),
    ];
    for (const refused of refusals)
      expect(refused).toMatchObject({
        status: 401,
        body: { ok: false, error: { code: "FORBIDDEN" } },
      });
    expect(started).toEqual([]);
  });

  it("refuses a signed body that is not a reply's start, saying why", async () => {
    for (const [body, reason] of [
      ["not json", /not JSON/],
      [JSON.stringify({ ...START, chatId: "" }), /chatId/],
      [JSON.stringify({ ...START, startedAt: "soon" }), /startedAt/],
      [JSON.stringify({ chatId: "c1" }), /replyId/],
      [JSON.stringify([START]), /body/],
      [JSON.stringify({ ...START, userId: "u".repeat(201) }), /userId/],
    ] as const) {
      const refused = await post(body);
      expect(refused.status, body).toBe(400);
      expect(refused.body.error?.message).toMatch(reason);
    }
    expect(started).toEqual([]);
  });

  it("refuses a large body before reading it as JSON, and anything but POST", async () => {
    expect((await post(JSON.stringify({ ...START, pad: "x".repeat(4096) }))).status).toBe(413);
    expect((await post("", null, "GET")).status).toBe(405);
    expect(started).toEqual([]);
  });

  it("POST /openwebui/titles: a title Open WebUI made after a reply, signed like a reply's start", async () => {
    const body = JSON.stringify({ chatId: "c1", title: "Deploy plan" });
    expect(
      await post(body, signFilterRequest(key, body, NOW), "POST", "/openwebui/titles"),
    ).toEqual({ status: 200, body: { ok: true } });
    expect((await post(body, null, "POST", "/openwebui/titles")).status).toBe(401);
    expect(
      (await post(JSON.stringify({ chatId: "c1" }), undefined, "POST", "/openwebui/titles")).status,
    ).toBe(400);
    expect(titled).toEqual([["c1", "Deploy plan"]]);
  });

  it("says so when the store the instances share is away: the filter goes on without it", async () => {
    failWith = new StoreUnavailable("Redis unreachable");
    expect(await post(JSON.stringify(START))).toMatchObject({
      status: 503,
      body: { ok: false, error: { code: "UNAVAILABLE" } },
    });
  });
});
