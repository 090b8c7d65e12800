import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { ownerRequests } from "./owner-request.ts";
import { mintTabToken, secretKey } from "./tokens.ts";

const key = secretKey("owner-request-test-secret-owner-request-test");
const NOW = Date.parse("2026-06-01T12:00:00Z");
const HOUR = 3600 * 1000;
let now = NOW;
const ownerOf = ownerRequests({
  key,
  owners: new Set(["owner"]),
  maxTokenDays: 30,
  isKnownKid: async (kid) => kid === "current",
  now: () => now,
});

const request = (authorization?: string) =>
  ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;
const bearer = async (claims: { userId: string; chat?: string; kid?: string }) =>
  `Bearer ${await mintTabToken(key, { ...claims, ttlSeconds: 3600, now: NOW })}`;

describe("the owner of an HTTP request", () => {
  it("is the owner its Bearer dashboard token names, with the link it is", async () => {
    expect(await ownerOf(request(await bearer({ userId: "owner", kid: "current" })))).toEqual({
      owner: "owner",
      link: { kid: "current", expiresAt: NOW + HOUR },
    });
    expect(await ownerOf(request(await bearer({ userId: "owner" })))).toEqual({
      owner: "owner",
      link: { kid: null, expiresAt: NOW + HOUR },
    });
  });

  it("is nobody for no token, a malformed header, a bad or revoked token, an embed token or a user who is not an owner", async () => {
    for (const header of [
      undefined,
      "",
      "Bearer",
      "Basic abc",
      "Bearer not.a.token",
      `${await bearer({ userId: "owner" })} extra`,
    ])
      expect(await ownerOf(request(header)), String(header)).toBeNull();
    expect(await ownerOf(request(await bearer({ userId: "owner", kid: "revoked" })))).toBeNull();
    expect(await ownerOf(request(await bearer({ userId: "owner", chat: "chat-1" })))).toBeNull();
    expect(await ownerOf(request(await bearer({ userId: "alice", kid: "current" })))).toBeNull();
  });

  it("judges the token at the caller's time: expired once it is past its exp", async () => {
    const token = await bearer({ userId: "owner" });
    now = NOW + HOUR - 1000;
    expect(await ownerOf(request(token))).not.toBeNull();
    now = NOW + HOUR + 1000;
    expect(await ownerOf(request(token))).toBeNull();
    now = NOW;
  });
});
