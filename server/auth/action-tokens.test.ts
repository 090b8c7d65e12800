import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { actionTokenKey, mintActionToken, verifyActionToken } from "./action-tokens.ts";
import { mintTabToken } from "./tokens.ts";

const key = actionTokenKey("a".repeat(32));
const expiresAt = 1_800_000_000_000;

describe("action tokens", () => {
  it("carry the ask, the decision and the owner, until the ask's expiry", async () => {
    const token = await mintActionToken(key, {
      askId: "a1",
      decision: "deny",
      owner: "owner",
      kid: "owner-kid",
      expiresAt,
    });
    expect(await verifyActionToken(key, token, expiresAt - 1000)).toMatchObject({
      askId: "a1",
      decision: "deny",
      owner: "owner",
      kid: "owner-kid",
      expiresAt,
      jti: expect.any(String),
    });
    await expect(verifyActionToken(key, token, expiresAt)).rejects.toMatchObject({
      code: "EXPIRED",
    });
  });

  it("name the link their subscription was made with, when it has a key id", async () => {
    const token = await mintActionToken(key, {
      askId: "a1",
      decision: "allow-once",
      owner: "owner",
      kid: "device-phone",
      expiresAt,
    });
    expect(await verifyActionToken(key, token, expiresAt - 1000)).toMatchObject({
      askId: "a1",
      decision: "allow-once",
      owner: "owner",
      kid: "device-phone",
      expiresAt,
    });
  });

  it("refuse another key, a tab token, and a decision a push never offers", async () => {
    const token = await mintActionToken(key, {
      askId: "a1",
      decision: "allow-once",
      owner: "owner",
      kid: "owner-kid",
      expiresAt,
    });
    await expect(verifyActionToken(actionTokenKey("b".repeat(32)), token, 0)).rejects.toMatchObject(
      { code: "INVALID" },
    );
    // A tab token signed with AUTH_SECRET itself is not an action token, and the other way round.
    const tab = await mintTabToken(new TextEncoder().encode("a".repeat(32)), {
      userId: "owner",
      ttlSeconds: 60,
    });
    await expect(verifyActionToken(key, tab, Date.now())).rejects.toMatchObject({
      code: "INVALID",
    });
    const always = await mintActionToken(key, {
      askId: "a1",
      decision: "allow-always",
      owner: "owner",
      kid: "owner-kid",
      expiresAt,
    });
    await expect(verifyActionToken(key, always, 0)).rejects.toMatchObject({ code: "INVALID" });
  });

  it("22.1 refuse one without a link's key id: it was sent to a subscription made with a token that cannot be revoked", async () => {
    const withoutKid = await new SignJWT({
      typ: "openclaw-asks/push-action",
      ask: "a1",
      dec: "allow-once",
    })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("owner")
      .setJti("j1")
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(key);
    await expect(verifyActionToken(key, withoutKid, expiresAt - 1000)).rejects.toMatchObject({
      code: "INVALID",
    });
  });
});
