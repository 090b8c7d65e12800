import { execFileSync } from "node:child_process";
import path from "node:path";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { mintTabToken, secretKey, verifyTabToken } from "./auth.ts";

const SECRET = "s".repeat(40);
const key = secretKey(SECRET);

describe("tab tokens", () => {
  it("round-trips a token with a chat claim", async () => {
    const token = await mintTabToken(key, { userId: "u1", chat: "c1", ttlSeconds: 60 });
    expect(await verifyTabToken(token, key)).toEqual({ userId: "u1", chat: "c1" });
  });

  it("accepts an Open WebUI session token (user id in `id`, HS256 with the shared secret)", async () => {
    const token = await new SignJWT({ id: "owui-user" }).setProtectedHeader({ alg: "HS256" }).sign(key);
    expect(await verifyTabToken(token, key)).toEqual({ userId: "owui-user", chat: null });
  });

  it("says why a token is refused", async () => {
    await expect(verifyTabToken(undefined, key)).rejects.toThrow(/missing token/);
    await expect(verifyTabToken(await mintTabToken(secretKey("x".repeat(40)), { userId: "u", ttlSeconds: 60 }), key)).rejects.toThrow(/signature is invalid/);
    const expired = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u").setExpirationTime(Math.floor(Date.now() / 1000) - 10).sign(key);
    await expect(verifyTabToken(expired, key)).rejects.toThrow(/expired/);
    const anonymous = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).sign(key);
    await expect(verifyTabToken(anonymous, key)).rejects.toThrow(/no user id/);
  });

  it("accepts the token the Open WebUI filter mints in Python", async () => {
    const script = "import sys; sys.path.insert(0, sys.argv[1]); from openclaw_asks_filter import mint_embed_token; print(mint_embed_token(sys.argv[2], 'user-7', 'chat-9', 60))";
    const token = execFileSync("python3", ["-c", script, path.resolve("integrations/open-webui"), SECRET], { encoding: "utf8" }).trim();
    expect(await verifyTabToken(token, key)).toEqual({ userId: "user-7", chat: "chat-9" });
  });
});
