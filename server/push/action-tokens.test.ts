import { describe, expect, it } from "vitest";
import { mintTabToken } from "../tabs/auth.ts";
import { actionTokenKey, mintActionToken, verifyActionToken } from "./action-tokens.ts";

const key = actionTokenKey("a".repeat(32));
const expiresAt = 1_800_000_000_000;

describe("action tokens", () => {
  it("carry the ask, the decision and the owner, until the ask's expiry", async () => {
    const token = await mintActionToken(key, { askId: "a1", decision: "deny", owner: "owner", kid: null, expiresAt });
    expect(await verifyActionToken(key, token, expiresAt - 1000)).toMatchObject({ askId: "a1", decision: "deny", owner: "owner", kid: null, expiresAt, jti: expect.any(String) });
    await expect(verifyActionToken(key, token, expiresAt)).rejects.toMatchObject({ code: "EXPIRED" });
  });

  it("name the link their subscription was made with, when it has a key id", async () => {
    const token = await mintActionToken(key, { askId: "a1", decision: "allow-once", owner: "owner", kid: "device-phone", expiresAt });
    expect(await verifyActionToken(key, token, expiresAt - 1000)).toMatchObject({ askId: "a1", decision: "allow-once", owner: "owner", kid: "device-phone", expiresAt });
  });

  it("refuse another key, a tab token, and a decision a push never offers", async () => {
    const token = await mintActionToken(key, { askId: "a1", decision: "allow-once", owner: "owner", kid: null, expiresAt });
    await expect(verifyActionToken(actionTokenKey("b".repeat(32)), token, 0)).rejects.toMatchObject({ code: "INVALID" });
    // A tab token signed with AUTH_SECRET itself is not an action token, and the other way round.
    const tab = await mintTabToken(new TextEncoder().encode("a".repeat(32)), { userId: "owner", ttlSeconds: 60 });
    await expect(verifyActionToken(key, tab, Date.now())).rejects.toMatchObject({ code: "INVALID" });
    const always = await mintActionToken(key, { askId: "a1", decision: "allow-always", owner: "owner", kid: null, expiresAt });
    await expect(verifyActionToken(key, always, 0)).rejects.toMatchObject({ code: "INVALID" });
  });
});
