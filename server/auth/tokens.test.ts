import { execFileSync } from "node:child_process";
import path from "node:path";
import { decodeJwt, jwtVerify, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { filterSecret } from "./keys.ts";
import { mintTabToken, secretKey, verifyTabToken } from "./tokens.ts";

const SECRET = "s".repeat(40);
const key = secretKey(SECRET);
const NOW = Date.parse("2026-06-01T12:00:00Z");
const rules = { maxTokenDays: 30, now: () => NOW };
const seconds = (ms: number) => Math.floor(ms / 1000);
const DAY = 24 * 3600 * 1000;

/** A token signed with the right key, with exactly these claims (no defaults added). */
const signed = (claims: Record<string, unknown>) =>
  new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(key);
/** The `exp` a token was minted with, in epoch ms. */
const expiryOf = (token: string) => decodeJwt(token).exp! * 1000;

describe("tab tokens", () => {
  it("round-trips a token with a chat claim", async () => {
    const token = await mintTabToken(key, { userId: "u1", chat: "c1", ttlSeconds: 60 });
    expect(await verifyTabToken(token, key, { maxTokenDays: 30, now: Date.now })).toEqual({
      userId: "u1",
      chat: "c1",
      reply: null,
      kid: null,
      expiresAt: expiryOf(token),
    });
  });

  it("accepts an Open WebUI session token (user id in `id`, HS256 with the shared secret, exp from JWT_EXPIRES_IN)", async () => {
    const token = await signed({ id: "owui-user", exp: seconds(NOW + 7 * DAY) });
    expect(await verifyTabToken(token, key, rules)).toEqual({
      userId: "owui-user",
      chat: null,
      reply: null,
      kid: null,
      expiresAt: seconds(NOW + 7 * DAY) * 1000,
    });
  });

  it("says why a token is refused", async () => {
    await expect(verifyTabToken(undefined, key, rules)).rejects.toThrow(/missing token/);
    await expect(
      verifyTabToken(
        await mintTabToken(secretKey("x".repeat(40)), { userId: "u", ttlSeconds: 60 }),
        key,
        { maxTokenDays: 30, now: Date.now },
      ),
    ).rejects.toThrow(/signature is invalid/);
    await expect(
      verifyTabToken(await signed({ sub: "u", exp: seconds(NOW) - 10 }), key, rules),
    ).rejects.toThrow(/expired/);
    await expect(
      verifyTabToken(await signed({ exp: seconds(NOW) + 60 }), key, rules),
    ).rejects.toThrow(/no user id/);
  });

  it("accepts the token the Open WebUI filter mints in Python, with its message and mint-time claims", async () => {
    const script =
      "import sys; sys.path.insert(0, sys.argv[1]); from openclaw_asks_filter import mint_embed_token; print(mint_embed_token(sys.argv[2], 'user-7', 'chat-9', 60, message_id='assistant-3'))";
    const mintedAfterMs = Date.now();
    const token = execFileSync(
      "python3",
      ["-c", script, path.resolve("integrations/open-webui"), SECRET],
      { encoding: "utf8" },
    ).trim();
    const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"] });
    // What the server orders the chat's replies by: the assistant message and the mint time in ms.
    expect(await verifyTabToken(token, key, { maxTokenDays: 30, now: Date.now })).toEqual({
      userId: "user-7",
      chat: "chat-9",
      reply: { msg: "assistant-3", mts: payload.mts },
      kid: null,
      expiresAt: payload.exp! * 1000,
    });
    expect(payload).toMatchObject({ sub: "user-7", chat: "chat-9", msg: "assistant-3" });
    expect(payload.exp! - payload.iat!).toBe(60);
    expect(payload.mts).toBeTypeOf("number");
    expect(payload.mts).toBeGreaterThanOrEqual(Math.floor(mintedAfterMs / 1000) * 1000);
    expect(payload.mts).toBeLessThanOrEqual(Date.now());
    expect(Math.floor((payload.mts as number) / 1000)).toBe(payload.iat);
  });
});

describe("the Open WebUI filter's key (its auth_secret valve): widget tokens only", () => {
  const embedKey = secretKey(filterSecret(SECRET));
  const withEmbedKey = { ...rules, embedKey };
  const byFilter = (claims: Record<string, unknown>, header: Record<string, string> = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg: "HS256", ...header }).sign(embedKey);
  const exp = seconds(NOW + 3600_000);

  it("signs a widget token, bound to one chat and reply, as the Python filter mints it", async () => {
    const token = await byFilter({ sub: "u1", chat: "c1", msg: "m1", mts: NOW, exp });
    expect(await verifyTabToken(token, key, withEmbedKey)).toMatchObject({
      userId: "u1",
      chat: "c1",
      reply: { msg: "m1", mts: NOW },
      kid: null,
    });
  });

  it("signs nothing else: a token for every chat, a link's key id; and nothing where it is not offered", async () => {
    await expect(
      verifyTabToken(await byFilter({ sub: "owner", exp }), key, withEmbedKey),
    ).rejects.toThrow("must be bound to one chat");
    await expect(
      verifyTabToken(await byFilter({ sub: "owner", chat: "c1", exp }, { kid: "k1" }), key, {
        ...withEmbedKey,
        isKnownKid: async () => true,
      }),
    ).rejects.toThrow("must be bound to one chat");
    await expect(
      verifyTabToken(await byFilter({ sub: "u1", chat: "c1", exp }), key, rules),
    ).rejects.toThrow("token signature is invalid");
  });
});

describe("embed tokens of one reply (msg, mts)", () => {
  it("round-trips the reply claim; a token without one (the first filter's) has none", async () => {
    const token = await mintTabToken(key, {
      userId: "u1",
      chat: "c1",
      reply: { msg: "a12", mts: NOW },
      ttlSeconds: 60,
    });
    expect(await verifyTabToken(token, key, { maxTokenDays: 30, now: Date.now })).toEqual({
      userId: "u1",
      chat: "c1",
      reply: { msg: "a12", mts: NOW },
      kid: null,
      expiresAt: expiryOf(token),
    });
  });

  it("an expired token is refused, unless the caller only needs it validly signed (a reply's summaries)", async () => {
    const expired = await signed({
      sub: "u",
      chat: "c",
      msg: "a1",
      mts: NOW - 2 * DAY,
      exp: seconds(NOW - DAY),
    });
    await expect(verifyTabToken(expired, key, rules)).rejects.toThrow(/expired/);
    expect(await verifyTabToken(expired, key, { ...rules, allowExpired: true })).toEqual({
      userId: "u",
      chat: "c",
      reply: { msg: "a1", mts: NOW - 2 * DAY },
      kid: null,
      expiresAt: seconds(NOW - DAY) * 1000,
    });
    // Expired or not, a bad signature is a bad signature.
    const forged = await new SignJWT({ sub: "u", chat: "c", exp: seconds(NOW - DAY) })
      .setProtectedHeader({ alg: "HS256" })
      .sign(secretKey("x".repeat(40)));
    await expect(verifyTabToken(forged, key, { ...rules, allowExpired: true })).rejects.toThrow(
      /signature is invalid/,
    );
  });

  it.each([
    [{ msg: "a1" }, /malformed mts/],
    [{ mts: NOW }, /malformed msg/],
    [{ msg: "", mts: NOW }, /malformed msg/],
    [{ msg: "a1", mts: "soon" }, /malformed mts/],
    [{ msg: "a1", mts: 1.5 }, /malformed mts/],
  ])(
    "a malformed reply claim (%j) is refused, not read as a token of no reply",
    async (claims, message) => {
      await expect(
        verifyTabToken(
          await signed({ sub: "u", chat: "c", exp: seconds(NOW) + 60, ...claims }),
          key,
          rules,
        ),
      ).rejects.toThrow(message);
    },
  );

  it("a reply claim without a chat claim is refused", async () => {
    await expect(
      verifyTabToken(
        await signed({ sub: "u", msg: "a1", mts: NOW, exp: seconds(NOW) + 60 }),
        key,
        rules,
      ),
    ).rejects.toThrow(/no chat claim/);
  });
});

describe("attacks on tab tokens", () => {
  it.each([[""], [123], [["A"]], [{ id: "A" }], [null], [true]])(
    "a malformed chat claim (%j) does not give an unrestricted token",
    async (chat) => {
      const token = await signed({ sub: "mallory", chat, exp: seconds(NOW) + 3600 });
      await expect(verifyTabToken(token, key, rules)).rejects.toThrow(/malformed chat claim/);
    },
  );

  it("a token without exp (an Open WebUI session token without JWT_EXPIRES_IN) never expiring is refused", async () => {
    await expect(verifyTabToken(await signed({ id: "owui-user" }), key, rules)).rejects.toThrow(
      /no exp/,
    );
    await expect(
      verifyTabToken(await signed({ sub: "u", iat: seconds(NOW) }), key, rules),
    ).rejects.toThrow(/no exp/);
  });

  it("a token valid for years is refused: exp more than MAX_TOKEN_DAYS ahead, judged from exp and the clock", async () => {
    const tenYears = await signed({ sub: "u", exp: seconds(NOW + 3650 * DAY) });
    await expect(verifyTabToken(tenYears, key, rules)).rejects.toThrow(/more than 30 days ahead/);
    // No iat to go by (older Open WebUI tokens): the same rule holds.
    const justOver = await signed({ id: "owui-user", exp: seconds(NOW + 30 * DAY) + 60 });
    await expect(verifyTabToken(justOver, key, rules)).rejects.toThrow(/more than 30 days ahead/);
    const justUnder = await signed({ id: "owui-user", exp: seconds(NOW + 30 * DAY) - 60 });
    expect(await verifyTabToken(justUnder, key, rules)).toEqual({
      userId: "owui-user",
      chat: null,
      reply: null,
      kid: null,
      expiresAt: (seconds(NOW + 30 * DAY) - 60) * 1000,
    });
    // The limit is configurable (MAX_TOKEN_DAYS).
    await expect(verifyTabToken(justUnder, key, { ...rules, maxTokenDays: 7 })).rejects.toThrow(
      /more than 7 days ahead/,
    );
  });
});
